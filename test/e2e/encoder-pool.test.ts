import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { bodyOf } from "../support/api-client";
import { startFixtureServer, type FixtureServer } from "./fixtures";
import { type Client, startE2E, type E2E } from "./harness";

/**
 * Two encoder processes behind the local stand-in for Fly.io's proxy, as `ENCODERS=2 npm run dev`
 * runs them (docs/scaling.md): QStash delivers to the proxy's one address, which hands the
 * deliveries to the encoders in turn. Every stage line names the encoder it ran on.
 */
let e2e: E2E;
let fixtures: FixtureServer;
let client: Client;
const logs: { source: string; line: string }[] = [];

beforeAll(async () => {
  [e2e, fixtures] = await Promise.all([
    startE2E({ allowLoopbackSources: true, encoders: 2, log: (source, line) => logs.push({ source, line }) }),
    startFixtureServer(),
  ]);
  client = await e2e.client();
  await fixtures.source("short.mp4", { seconds: 1, width: 160, height: 90, fps: 15 });
  await fixtures.source("long.mp4", { seconds: 20, width: 320, height: 240 });
});
afterAll(async () => {
  await e2e?.stop();
  await fixtures?.stop();
});

/** The encoder each of the job's stage lines names, in order. */
const encodersOf = (jobId: string, stage: string) =>
  logs
    .filter((l) => l.source === "encoder" && l.line.startsWith(`job ${jobId}  ${stage} `))
    .map((l) => / {2}on (\S+) {2}/.exec(l.line)?.[1]);

const createJob = async (source: string) =>
  bodyOf(await client.createJob({ inputUrl: fixtures.url(source), preset: "mp4_264_240p" }), 201).id;

describe("ENCODERS=2", () => {
  it("two processes, each named, and jobs delivered to both in turn", async () => {
    expect(e2e.stack.encoders.map((e) => e.name)).toEqual(["encoder-1", "encoder-2"]);
    const [one, two] = e2e.stack.encoders.map((e) => e.pid());
    expect(one).not.toBe(two);

    const ids: string[] = [];
    for (let i = 0; i < 4; i++) ids.push(await createJob("short.mp4"));
    for (const id of ids) expect((await e2e.waitFor(client, id)).status).toBe("completed");
    const claimedOn = ids.flatMap((id) => encodersOf(id, "claim"));
    expect(new Set(claimedOn)).toEqual(new Set(["encoder-1", "encoder-2"]));
    // A job's every line names the one encoder that ran it.
    for (const id of ids) expect(new Set(encodersOf(id, "completed"))).toEqual(new Set(encodersOf(id, "claim")));
  });

  it("an encoder killed mid-job: its supervisor restarts it alone, and the job is delivered again and completes", async () => {
    const id = await createJob("long.mp4");
    const [running] = await vi.waitFor(
      () => {
        const on = encodersOf(id, "ffmpeg");
        if (on.length === 0) throw new Error("FFmpeg has not started");
        return on;
      },
      { timeout: 60_000, interval: 100 },
    );
    const killed = e2e.stack.encoders.find((e) => e.name === running)!;
    const other = e2e.stack.encoders.find((e) => e.name !== running)!;
    const [pid, otherPid] = [killed.pid(), other.pid()];
    process.kill(pid, "SIGKILL");
    await killed.readyAfter(pid);
    expect((await e2e.waitFor(client, id, undefined, 240_000)).status).toBe("completed");
    expect(killed.crashes()).toEqual([expect.objectContaining({ pid, signal: "SIGKILL" })]);
    expect(other.crashes()).toEqual([]);
    expect(other.pid()).toBe(otherPid);
  });

  it("with one encoder stopped, the proxy passes over it: the other serves every job", async () => {
    const [stopped, serving] = e2e.stack.encoders;
    await stopped.stop();
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push(await createJob("short.mp4"));
    for (const id of ids) expect((await e2e.waitFor(client, id)).status).toBe("completed");
    expect(ids.flatMap((id) => encodersOf(id, "claim"))).toEqual([serving.name, serving.name, serving.name]);
  });
});
