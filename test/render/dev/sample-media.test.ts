import { readFileSync } from "node:fs";
import { mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { prepareSampleMedia, SAMPLE_CLIP, SAMPLE_LOGO } from "../../../dev/samples";
import { processesMatching } from "../../e2e/dev-runner-support";
import { microtasksDrained } from "../../support/barriers";

/** The pids of live FFmpeg processes writing into `dir`. */
const ffmpegIn = (dir: string) => processesMatching(`^ffmpeg .*${dir}`).map((line) => Number(line.split(" ")[0]));

/** A process's state letter from /proc (T: stopped). */
function stateOf(pid: number): string {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  return stat.slice(stat.lastIndexOf(")") + 2).split(" ")[0];
}

/** Whether a SIGTERM sent to the process waits on it, undelivered (it is stopped): /proc's pending set. */
function termPending(pid: number): boolean {
  const pending = /^ShdPnd:\s*([0-9a-f]+)$/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1] ?? "0";
  return (BigInt(`0x${pending}`) & (1n << BigInt(SIGTERM - 1))) !== 0n;
}
const SIGTERM = 15;

/**
 * The sample media being made into a directory of its own, its FFmpeg found and held with
 * SIGSTOP. A try whose FFmpeg ended between being found and being held (a loaded host can
 * delay the search to the clip's last moments) is let finish, and another begun.
 */
async function makingWithFfmpegHeld() {
  for (let attempt = 0; attempt < 3; attempt++) {
    const into = join(dir, `stopped-${attempt}`);
    const stopping = new AbortController();
    const making = Object.assign(prepareSampleMedia(into, stopping.signal), { stop: () => stopping.abort() });
    let pids: number[] = [];
    await expect
      .poll(
        () => {
          pids = ffmpegIn(into);
          return pids.length;
        },
        { timeout: 30_000, interval: 10 },
      )
      .toBe(1);
    try {
      process.kill(pids[0], "SIGSTOP");
      // Stopped for certain before anything else is sent: caught while exec still loads it
      // (state D), it takes the stop only on its way out, and a SIGTERM sent meanwhile would win.
      await expect.poll(() => stateOf(pids[0]), { timeout: 10_000, interval: 5 }).toBe("T");
      return { making, pid: pids[0], into };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "ESRCH") throw err;
      await making.catch(() => undefined);
    }
  }
  throw new Error("FFmpeg ended before it could be held, three times");
}

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "dev-samples-"));
});
afterAll(() => rm(dir, { recursive: true, force: true }));

describe("npm run dev's sample media", () => {
  it("a start stopped while FFmpeg makes the clip settles only once FFmpeg is gone, leaving nothing half-made", async () => {
    const { making, pid, into } = await makingWithFfmpegHeld();
    const settled = making.then(
      () => "made",
      () => "stopped",
    );
    // Held with SIGSTOP, FFmpeg cannot act on the abort's SIGTERM: the start must wait for it, not
    // settle (and let `npm run dev` exit) with FFmpeg still there, as it once did.
    try {
      making.stop();
      // The stop has reached FFmpeg: its SIGTERM waits on the stopped process.
      await expect.poll(() => termPending(pid), { timeout: 10_000, interval: 5 }).toBe(true);
      // A start that did not wait for FFmpeg would remove its partial file and settle. The thread
      // pool starts file operations first in, first out: two of ours, queued after that one and
      // run one after the other, show its turn has passed.
      for (let i = 0; i < 2; i++) await rm(join(dir, "after-the-stop"), { force: true });
      const early = await Promise.race([settled, microtasksDrained().then(() => "waiting")]);
      expect(early).toBe("waiting");
    } finally {
      process.kill(pid, "SIGCONT");
    }
    expect(await settled).toBe("stopped");
    expect(ffmpegIn(dir)).toEqual([]);
    expect(await readdir(into)).toEqual([]);
  });

  it("made in full: the clip and the logo, and nothing else", async () => {
    await prepareSampleMedia(join(dir, "made"));
    expect((await readdir(join(dir, "made"))).sort()).toEqual([SAMPLE_LOGO, SAMPLE_CLIP].sort());
  });
});
