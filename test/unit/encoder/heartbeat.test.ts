import { describe, expect, it, vi } from "vitest";
import { startHeartbeat } from "../../../encoder/jobs/heartbeat";
import { timerTurns } from "../../support/barriers";

describe("the heartbeat", () => {
  it("sends one beat at a time to a slow Worker, and nothing of it lands after stop() returns", async () => {
    let open = 0;
    let most = 0;
    let beats = 0;
    let landedAfterStop = 0;
    let stopped = false;
    let turns: ReturnType<typeof timerTurns> | undefined;
    // A slow Worker: each beat is answered only after five of the interval's turns, each a chance to send another.
    const send = async () => {
      beats += 1;
      most = Math.max(most, ++open);
      await turns?.passed(5);
      open -= 1;
      if (stopped) landedAfterStop += 1;
      return { status: "processing" };
    };
    const heartbeat = startHeartbeat(send, 20, () => undefined);
    turns = timerTurns(20);
    try {
      await vi.waitFor(() => expect(beats).toBeGreaterThanOrEqual(3), { timeout: 30_000, interval: 5 });
      // Stopped while a beat is out: stop() waits for its answer.
      await vi.waitFor(() => expect(open).toBe(1), { timeout: 30_000, interval: 1 });
      await heartbeat.stop();
      stopped = true;
      const sent = beats;
      // The interval's next turns, had stop() left it running.
      await turns.passed(10);
      expect(beats).toBe(sent);
      expect(most).toBe(1);
      expect(landedAfterStop).toBe(0);
    } finally {
      turns.stop();
    }
  });

  it("carries the progress, and the duration from the moment it is known", async () => {
    const sent: unknown[] = [];
    const send = async (beat: unknown) => {
      sent.push(beat);
      return { status: "processing" };
    };
    const heartbeat = startHeartbeat(send, 10, () => undefined);
    const beatsSoon = async (count: number) => {
      const from = sent.length;
      await vi.waitFor(() => expect(sent.length).toBeGreaterThanOrEqual(from + count), {
        timeout: 10_000,
        interval: 5,
      });
      return sent.at(-1);
    };
    expect(await beatsSoon(1)).toEqual({ progress: undefined, duration: undefined });
    heartbeat.setDuration(12.5);
    heartbeat.setProgress(0.25);
    expect(await beatsSoon(2)).toEqual({ progress: 0.25, duration: 12.5 });
    await heartbeat.stop();
  });
});
