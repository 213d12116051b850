import { readFile } from "node:fs/promises";
import { createServer, type Server, type Socket } from "node:net";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { isJobStageLine } from "../../encoder/jobs/stage-log";
import { crashOnSignalEnv } from "../support/crash-on-signal";
import { ffmpeg } from "../support/media";
import { bodyOf } from "../support/api-client";
import { startFixtureServer, type FixtureServer } from "./fixtures";
import { startE2E, type E2E } from "./harness";

/**
 * The encoder process under faults from outside: sources that close the connection right after
 * the body, and a fault outside any job. It must survive the first and be restarted by its
 * supervisor after the second, and say what it is doing, one line per job stage. (A kill -9
 * mid-job is in test/faults/encoder-and-storage.test.ts.)
 */
let e2e: E2E;
let fixtures: FixtureServer;
let closing: Awaited<ReturnType<typeof startCloseAfterBodyServer>>;
const logs: { source: string; line: string }[] = [];

/**
 * Answers every request with the whole file in one write, Content-Length and Connection: close,
 * and closes at once: the FIN arrives while the encoder is still writing the body to disk.
 */
async function startCloseAfterBodyServer(body: Buffer) {
  let requests = 0;
  const sockets = new Set<Socket>();
  const server: Server = createServer((socket) => {
    sockets.add(socket);
    socket.on("error", () => undefined);
    socket.once("data", () => {
      requests += 1;
      const head = `HTTP/1.1 200 OK\r\nContent-Type: video/mp4\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n`;
      socket.end(Buffer.concat([Buffer.from(head), body]));
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return {
    url: (name: string) => `http://127.0.0.1:${(server.address() as { port: number }).port}/${name}`,
    requests: () => requests,
    stop: async () => {
      for (const s of sockets) s.destroy();
      await new Promise((r) => server.close(r));
    },
  };
}

const stageLines = (jobId: string) =>
  logs.filter((l) => l.source === "encoder" && l.line.startsWith(`job ${jobId}  `)).map((l) => l.line);
const supervisorLines = () => logs.filter((l) => l.source === "supervisor").map((l) => l.line);

beforeAll(async () => {
  [e2e, fixtures] = await Promise.all([
    startE2E({
      allowLoopbackSources: true,
      env: crashOnSignalEnv(),
      log: (source, line) => logs.push({ source, line }),
    }),
    startFixtureServer(),
  ]);
  // About 6 MB that is cheap to make and to encode: 4 s of noisy MPEG-4.
  const big = join(fixtures.dir, "big.mp4");
  await ffmpeg([
    "-f",
    "lavfi",
    "-i",
    "testsrc2=size=640x360:rate=30:duration=4,noise=alls=10:allf=t",
    "-f",
    "lavfi",
    "-i",
    "sine=frequency=440:sample_rate=48000:duration=4",
    "-c:v",
    "mpeg4",
    "-q:v",
    "4",
    "-c:a",
    "aac",
    big,
  ]);
  closing = await startCloseAfterBodyServer(await readFile(big));
});
afterAll(async () => {
  await e2e?.stop();
  await fixtures?.stop();
  await closing?.stop();
});

describe("a source that closes the connection right after its body", () => {
  it("jobs on it complete, and the encoder process that ran them is still the one alive", async () => {
    const pid = e2e.stack.encoderPid()!;
    const c = await e2e.client();
    const ids: string[] = [];
    for (let i = 0; i < 4; i++) {
      ids.push(bodyOf(await c.createJob({ inputUrl: closing.url(`source-${i}.mp4`), preset: "mp4_264_240p" }), 201).id);
    }
    for (const id of ids) {
      const job = await e2e.waitFor(c, id);
      expect(job, id).toMatchObject({ status: "completed", retryCount: 0 });
    }
    expect(closing.requests()).toBe(4);
    expect(e2e.stack.encoderPid()).toBe(pid);
    expect(() => process.kill(pid, 0)).not.toThrow();
    expect(e2e.stack.encoderCrashes()).toEqual([]);
  });
});

describe("encoder job-stage log", () => {
  it("one line per stage, each prefixed with the job id, in order, with sizes, durations and FFmpeg's speed", async () => {
    const c = await e2e.client();
    const src = await fixtures.source("stages.mp4", { seconds: 3, width: 320, height: 240 });
    const id = bodyOf(await c.createJob({ inputUrl: src, preset: "mp4_264_240p" }), 201).id;
    expect((await e2e.waitFor(c, id)).status).toBe("completed");
    const size = (await readFile(join(fixtures.dir, "stages.mp4"))).length;
    const lines = stageLines(id);
    expect(lines.map((l) => l.split(/\s+/)[2])).toEqual([
      "claim",
      "download",
      "probe",
      "ffmpeg",
      "ffmpeg",
      "upload",
      "completed",
    ]);
    expect(lines[0]).toMatch(/claim +on encoder-1 {2}attempt 1 of 3, preset mp4_264_240p$/);
    expect(lines[1]).toMatch(new RegExp(`download +on encoder-1  ${(size / 1024).toFixed(1)} KiB in \\d+\\.\\d+ s$`));
    expect(lines[2]).toMatch(/probe +on encoder-1 {2}3\.0\d s; video h264 320x240 30 fps; audio aac 2 ch 48 kHz$/);
    expect(lines[3]).toMatch(/ffmpeg +on encoder-1 {2}started on 3\.0\d s of media$/);
    expect(lines[4]).toMatch(/ffmpeg +on encoder-1 {2}finished in \d+\.\d+ s, speed=\d+\.\d\dx$/);
    expect(lines[5]).toMatch(/upload +on encoder-1 {2}\d+\.\d KiB in \d+\.\d+ s$/);
    expect(lines[6]).toMatch(/completed +on encoder-1 {2}in \d+\.\d+ s$/);
    expect(lines.every(isJobStageLine)).toBe(true);
  });

  it("a failure is logged with the job id and the reason, and whether it is retried", async () => {
    const c = await e2e.client();
    // A private address is refused at creation; a redirect to one is the encoder's to refuse.
    const inputUrl = fixtures.url(`redirect?to=${encodeURIComponent("http://10.0.0.1/video.mp4")}`);
    const id = bodyOf(await c.createJob({ inputUrl, preset: "mp4_264_240p" }), 201).id;
    expect((await e2e.waitFor(c, id)).status).toBe("failed");
    expect(stageLines(id).at(-1)).toBe(
      `job ${id}  failed     on encoder-1  attempt 1 of 3, not retried: Source refused: 10.0.0.1 is not a public address`,
    );
  });
});

describe("supervision", () => {
  it("a fault outside any job: the encoder exits on its own, the report carries its last words, and it comes back", async () => {
    const pid = e2e.stack.encoderPid()!;
    process.kill(pid, "SIGUSR2");
    await e2e.stack.encoderReadyAfter(pid);

    expect(e2e.stack.encoderCrashes().at(-1)).toMatchObject({ pid, code: 1, signal: null });
    const lines = supervisorLines();
    const report = lines.slice(lines.findIndex((l) => l.startsWith(`ENCODER CRASHED: pid ${pid} `)));
    expect(report[0]).toMatch(new RegExp(`^ENCODER CRASHED: pid ${pid} exited with code 1 after `));
    expect(report).toContainEqual(expect.stringMatching(/^ {4}ENCODER FAILURE: an uncaught exception outside any job/));
    expect(report).toContainEqual(
      expect.stringMatching(/^ {4}Error: a fault outside any job, raised by the test through SIGUSR2$/),
    );

    // The new encoder serves jobs.
    const c = await e2e.client();
    const src = await fixtures.source("after-restart.mp4", { seconds: 2, width: 320, height: 240 });
    const id = bodyOf(await c.createJob({ inputUrl: src, preset: "mp4_264_240p" }), 201).id;
    expect((await e2e.waitFor(c, id)).status).toBe("completed");
  });
});
