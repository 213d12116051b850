import { describe, expect, it } from "vitest";
import { startHeartbeat } from "../../../encoder/jobs/heartbeat";

describe("the heartbeat", () => {
  it("sends one beat at a time to a slow Worker, and nothing of it lands after stop() returns", async () => {
    let open = 0;
    let most = 0;
    let beats = 0;
    let landedAfterStop = 0;
    let stopped = false;
    const send = async () => {
      beats += 1;
      most = Math.max(most, ++open);
      await new Promise((r) => setTimeout(r, 120));
      open -= 1;
      if (stopped) landedAfterStop += 1;
      return { status: "processing" };
    };
    const heartbeat = startHeartbeat(send, 20, () => undefined);
    await new Promise((r) => setTimeout(r, 500));
    await heartbeat.stop();
    stopped = true;
    await new Promise((r) => setTimeout(r, 300));
    expect(beats).toBeGreaterThanOrEqual(3);
    expect(most).toBe(1);
    expect(landedAfterStop).toBe(0);
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
      while (sent.length < from + count) await new Promise((r) => setTimeout(r, 5));
      return sent.at(-1);
    };
    expect(await beatsSoon(1)).toEqual({ progress: undefined, duration: undefined });
    heartbeat.setDuration(12.5);
    heartbeat.setProgress(0.25);
    expect(await beatsSoon(2)).toEqual({ progress: 0.25, duration: 12.5 });
    await heartbeat.stop();
  });
});
