import { EventEmitter } from "node:events";
import { afterAll, afterEach, describe, expect, it, vi } from "vitest";

// Out of file descriptors, Node's spawn makes no pipes (stdout and stderr are null) and reports
// the error on the next tick: what a run must survive without an uncaught error or a timer left.
vi.mock("node:child_process", async (importOriginal) => ({
  ...(await importOriginal<typeof import("node:child_process")>()),
  spawn: () => {
    const child = Object.assign(new EventEmitter(), {
      stdout: null,
      stderr: null,
      stdin: null,
      pid: undefined,
      kill: () => false,
    });
    process.nextTick(() =>
      child.emit(
        "error",
        Object.assign(new Error("spawn ffmpeg EMFILE"), { code: "EMFILE", errno: -24, syscall: "spawn ffmpeg" }),
      ),
    );
    return child;
  },
}));

// The unit project shares one module cache across its files (isolate: false): the runner is
// evaluated afresh against this file's child_process, and dropped again for the files after it.
vi.resetModules();
const { runFfmpeg, runFfprobe } = await import("../../../encoder/ffmpeg/run");
afterAll(() => {
  vi.doUnmock("node:child_process");
  vi.resetModules();
});

afterEach(() => {
  vi.useRealTimers();
});

describe("a tool Node could not start for want of file descriptors", () => {
  it("fails the run retryably, saying it could not be started, with no uncaught error and no watchdog left running", async () => {
    vi.useFakeTimers({ toFake: ["setInterval", "clearInterval"] });
    const uncaught = vi.fn();
    process.on("uncaughtException", uncaught);
    try {
      await expect(runFfmpeg(["-version"])).rejects.toMatchObject({
        kind: "ffmpeg",
        retryable: true,
        message: "ffmpeg could not be started: spawn ffmpeg EMFILE",
      });
      await expect(runFfprobe(["-version"])).rejects.toMatchObject({ kind: "ffmpeg", retryable: true });
      await new Promise((r) => setImmediate(r));
      expect(uncaught).not.toHaveBeenCalled();
      expect(vi.getTimerCount()).toBe(0);
    } finally {
      process.off("uncaughtException", uncaught);
    }
  });
});
