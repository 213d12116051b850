import { describe, expect, it } from "vitest";
import { describeCrash, restartDelayMs } from "../../../dev/encoder-process";

describe("npm run dev's encoder supervisor", () => {
  it("restarts at once after a crash, then backs off while the crashes keep coming soon after each start", () => {
    expect([1, 2, 3, 4, 5, 6, 7, 8].map(restartDelayMs)).toEqual([0, 1000, 2000, 4000, 8000, 16000, 30000, 30000]);
  });

  it("reports how the encoder ended, its last stderr lines and what happens next", () => {
    const exit = {
      pid: 4242,
      code: 1,
      signal: null,
      stderrTail: ["ENCODER FAILURE: an uncaught exception outside any job; the process state is unknown, so it exits for a clean restart.", "Error: boom"],
      uptimeMs: 12_345,
    };
    expect(describeCrash(exit, 2000, 8080)).toEqual([
      "ENCODER CRASHED: pid 4242 exited with code 1 after 12.3 s.",
      "  its last stderr lines:",
      "    ENCODER FAILURE: an uncaught exception outside any job; the process state is unknown, so it exits for a clean restart.",
      "    Error: boom",
      "  restarting it on port 8080 in 2 s; QStash delivers the jobs it had in flight again.",
    ]);
    expect(describeCrash({ ...exit, code: null, signal: "SIGKILL", stderrTail: [] }, 0, 8080)).toEqual([
      "ENCODER CRASHED: pid 4242 was killed by SIGKILL after 12.3 s.",
      "  it wrote nothing to stderr.",
      "  restarting it on port 8080 now; QStash delivers the jobs it had in flight again.",
    ]);
  });
});
