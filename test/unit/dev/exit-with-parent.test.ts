import { execFileSync, spawn } from "node:child_process";
import { describe, expect, it } from "vitest";
import { EXIT_WITH_PARENT_ARGS, exitWithParentEnv } from "../../../dev/exit-with-parent";

/** A Node process that would run forever, with the preload, its stdin a pipe from this process. */
function child(env: Record<string, string>, script = "setInterval(() => {}, 1000)", detached = false) {
  const proc = spawn(process.execPath, [...EXIT_WITH_PARENT_ARGS, "-e", script], {
    env: { ...process.env, ...env },
    stdio: ["pipe", "pipe", "inherit"],
    detached,
  });
  const exited = new Promise<NodeJS.Signals | null>((resolve) => proc.once("exit", (_code, signal) => resolve(signal)));
  const ready = new Promise<string>((resolve) => proc.stdout!.once("data", (d) => resolve(String(d).trim())));
  return { proc, exited, ready };
}

const groupMembers = (pgid: number) => {
  try {
    return execFileSync("pgrep", ["-g", String(pgid)], { encoding: "utf8" })
      .split("\n")
      .filter(Boolean);
  } catch {
    return []; // pgrep exits 1 when nothing matches
  }
};

describe("dev/exit-with-parent: a child of npm run dev ends when its parent's pipe closes", () => {
  it("EXIT_WITH_PARENT=process: the process is sent SIGTERM", async () => {
    const { proc, exited, ready } = child(
      exitWithParentEnv("process"),
      "setInterval(() => {}, 1000); console.log('up')",
    );
    await ready;
    proc.stdin!.end();
    expect(await exited).toBe("SIGTERM");
  });

  it("EXIT_WITH_PARENT=group: its whole process group is, a grandchild that is no Node process included", async () => {
    const script =
      "const c = require('node:child_process').spawn('sleep', ['300'], { stdio: 'ignore' }); console.log(c.pid); setInterval(() => {}, 1000)";
    const { proc, exited, ready } = child(exitWithParentEnv("group"), script, true);
    await ready;
    expect(groupMembers(proc.pid!)).toHaveLength(2);
    proc.stdin!.end();
    expect(await exited).toBe("SIGTERM");
    await expect.poll(() => groupMembers(proc.pid!), { timeout: 10_000 }).toEqual([]);
  });

  it("without EXIT_WITH_PARENT, the preload does nothing: its stdin may be anything", async () => {
    // The script hears its stdin end after the preload would have: had the preload acted, SIGTERM would have come first.
    const script =
      "setInterval(() => {}, 1000); process.stdin.on('end', () => console.log('stdin ended')).resume(); console.log('up')";
    const { proc, exited, ready } = child({}, script);
    await ready;
    const stdinEnded = new Promise<void>((resolve) =>
      proc.stdout!.on("data", (d) => String(d).includes("stdin ended") && resolve()),
    );
    proc.stdin!.end();
    await stdinEnded;
    expect(proc.exitCode).toBeNull();
    proc.kill("SIGKILL");
    expect(await exited).toBe("SIGKILL");
  });
});
