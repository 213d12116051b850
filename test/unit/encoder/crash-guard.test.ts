import { execFile, spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { JOBS } from "./fixtures/crash-guard-jobs";

/**
 * The crash guard in a process of its own (it installs process-wide handlers, which must not
 * meet the test runner's): errors no code caught end the job they came from, and the process
 * serves on; one from outside every job ends the process, loudly, for its supervisor to restart.
 */
const fixture = fileURLToPath(new URL("./fixtures/crash-guard-process.ts", import.meta.url));

function run(): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, ["--import", "tsx", fixture], { timeout: 60_000 }, (err, stdout, stderr) => {
      resolve({ code: err ? ((err as { code?: number }).code ?? null) : 0, stdout, stderr });
    });
  });
}

describe("crash guard", () => {
  it("ends only the job an uncaught error came from; an error outside every job exits the process", async () => {
    const { code, stdout, stderr } = await run();
    const events = stdout
      .split("\n")
      .filter((l) => l.startsWith("{"))
      .map((l) => JSON.parse(l));
    const lines = stdout.split("\n");

    // A throw from a socket's event handler inside the job: the job fails, retryably, as an internal error.
    expect(events).toContainEqual({
      event: "fail",
      jobId: JOBS.socketThrow,
      errorMessage: "Encoding failed because of an internal encoder error.",
      retryable: true,
      duration: null,
    });
    // The Worker dispatches the retry: this delivery is settled.
    expect(events).toContainEqual({ event: "result", jobId: JOBS.socketThrow, result: "done" });
    expect(stderr).toMatch(
      new RegExp(
        `job ${JOBS.socketThrow}  error      on encoder-test  an uncaught exception ended the job; the encoder carries on\\n.*thrown in a socket's data handler`,
      ),
    );
    expect(lines).toContainEqual(
      expect.stringMatching(
        new RegExp(
          `^job ${JOBS.socketThrow}  failed .*will be retried.*cause: Error: thrown in a socket's data handler`,
        ),
      ),
    );

    // An unobserved rejection inside a job on its last attempt: reported as a retryable failure, which the Worker makes final.
    expect(events).toContainEqual({
      event: "fail",
      jobId: JOBS.unobservedRejection,
      errorMessage: "Encoding failed because of an internal encoder error.",
      retryable: true,
      duration: null,
    });
    expect(lines).toContainEqual(
      expect.stringMatching(
        new RegExp(`^job ${JOBS.unobservedRejection}  failed +on encoder-test  attempt 3 of 3, not retried`),
      ),
    );
    expect(stderr).toContain(
      `job ${JOBS.unobservedRejection}  error      on encoder-test  an unhandled rejection ended the job`,
    );

    // The process carried on: the next job completed.
    expect(events).toContainEqual({ event: "complete", jobId: JOBS.healthy });
    expect(events).toContainEqual({ event: "result", jobId: JOBS.healthy, result: "done" });

    // Outside every job: loud, cleaned up, exit code 1, and not a moment of running on.
    expect(stderr).toMatch(/ENCODER FAILURE: an uncaught exception outside any job[^\n]*\n.*thrown outside any job/);
    expect(events.at(-1)).toEqual({ event: "before-exit" });
    expect(code).toBe(1);
  });

  it("exits when its output can no longer be written (its supervisor is gone), instead of spinning on the errors", async () => {
    const child = spawn(process.execPath, ["--import", "tsx", fixture], { stdio: ["ignore", "pipe", "pipe"] });
    const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
    // The first line read, both pipes are closed from this end, as when the supervisor dies.
    child.stdout.once("data", () => {
      child.stdout.destroy();
      child.stderr.destroy();
    });
    const timer = setTimeout(() => child.kill("SIGKILL"), 30_000);
    expect(await exited).toBe(1);
    clearTimeout(timer);
  });
});
