import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { AwsClient } from "aws4fetch";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { eq } from "drizzle-orm";
import { readEmulatedMessage } from "../../dev/cloud/qstash-emulator";
import { scratchPrefix } from "../../domain/split";
import { jobParts, jobs } from "../../drizzle/schema";
import { bodyOf, expectStatus } from "../support/api-client";
import { makeNumberedSource, readFrameNumbers } from "../support/frame-numbers";
import { frameOrderProblem } from "../support/frame-order";
import { startWebhookReceiver } from "../support/webhook-receiver";
import { startFixtureServer, type FixtureServer } from "./fixtures";
import { type Client, startE2E, type E2E } from "./harness";

/**
 * Split encoding through the whole service (docs/scaling.md): two encoders behind the local
 * stand-in for Fly's proxy, the Worker and its table of parts, QStash's deliveries, storage's
 * scratch. Thresholds are low (a 12 s source in parts of about 2 s) so a job splits in seconds.
 */
const NTSC = { num: 30000, den: 1001 };
const FRAMES = 360;

let e2e: E2E;
let fixtures: FixtureServer;
let client: Client;
/** The source from an origin that serves byte ranges, and from one that does not. */
let source: string;
let plainSource: string;
const logs: string[] = [];

beforeAll(async () => {
  [e2e, fixtures] = await Promise.all([
    startE2E({
      allowLoopbackSources: true,
      encoders: 2,
      env: {
        SPLIT_MIN_SECONDS: "4",
        STREAM_SPLIT_MIN_SECONDS: "4",
        SPLIT_PART_SECONDS: "2",
        // The 12 s source is small: read where it is all the same.
        SPLIT_RANGED_MIN_BYTES: "0",
        HEARTBEAT_MS: "500",
      },
      log: (from, line) => from === "encoder" && logs.push(line),
    }),
    startFixtureServer(),
  ]);
  client = await e2e.client();
  await makeNumberedSource(join(fixtures.dir, "numbered.mp4"), {
    seconds: 12,
    fps: NTSC,
    width: 640,
    height: 360,
    audio: true,
  });
  source = fixtures.url("numbered.mp4");
  plainSource = fixtures.url("no-ranges/numbered.mp4");
});
afterAll(async () => {
  await e2e?.stop();
  await fixtures?.stop();
});

const linesOf = (jobId: string) => logs.filter((line) => line.startsWith(`job ${jobId}  `));
/** The encoders that claimed the job's parts, by part number. */
const partsClaimed = (jobId: string) =>
  linesOf(jobId)
    .map((line) => / {2}part (\d+)\/\d+ {2}claim\s+on (\S+)/.exec(line))
    .filter((m) => m !== null)
    .map((m) => ({ part: Number(m[1]), encoder: m[2] }));

function storage() {
  const s3 = e2e.stack.info.cloud.s3;
  const aws = new AwsClient({
    accessKeyId: s3.accessKeyId,
    secretAccessKey: s3.secretAccessKey,
    service: "s3",
    region: s3.region,
  });
  return {
    async keys(prefix: string): Promise<string[]> {
      const res = await aws.fetch(`${s3.endpoint}/${s3.bucket}?list-type=2&prefix=${encodeURIComponent(prefix)}`);
      return [...(await res.text()).matchAll(/<Key>([^<]+)<\/Key>/g)].map((m) => m[1]);
    },
    async remove(key: string) {
      await aws.fetch(`${s3.endpoint}/${s3.bucket}/${key}`, { method: "DELETE" });
    },
  };
}

/**
 * Waits until every QStash message the job's rows name (the job's own, its parts') is settled in
 * the emulator: delivered, failed or cancelled, none waiting or being delivered.
 */
async function messagesSettled(jobId: string) {
  const { db } = e2e.admin;
  const named = [
    ...(await db.select({ messageId: jobs.messageId }).from(jobs).where(eq(jobs.id, jobId))),
    ...(await db.select({ messageId: jobParts.messageId }).from(jobParts).where(eq(jobParts.jobId, jobId))),
  ].map((row) => row.messageId);
  expect(named.length).toBeGreaterThan(1);
  await vi.waitFor(
    async () => {
      for (const messageId of named) {
        if (messageId === null) continue;
        const { state } = await readEmulatedMessage(e2e.stack.info.cloud.qstash, messageId);
        expect(["waiting", "delivering"], messageId).not.toContain(state);
      }
    },
    { timeout: 60_000, interval: 200 },
  );
}

const createJob = async (c: Client = client, preset = "mp4_264_480p", inputUrl = source) =>
  bodyOf(await c.createJob({ inputUrl, preset }), 201).id;

async function downloaded(c: Client, jobId: string): Promise<string> {
  const { downloadUrl } = bodyOf(await c.getDownloadUrl(jobId), 200);
  // Beside the fixtures, which go when the suite stops.
  const path = join(fixtures.dir, `output-${jobId}.mp4`);
  await writeFile(path, Buffer.from(await (await fetch(downloadUrl)).arrayBuffer()));
  return path;
}

/** The encoder that split the job, and the encoders that completed its tasks matching `task`. */
function tasksOf(jobId: string) {
  const splitOn = linesOf(jobId)
    .map((line) => /split\s+on (\S+) /.exec(line)?.[1])
    .find(Boolean);
  const completedOn = (task: RegExp) =>
    linesOf(jobId).flatMap((line) => {
      const m = / {2}(part \d+\/\d+|audio) {2}completed\s+on (\S+)/.exec(line);
      return m && task.test(m[1]) ? [m[2]] : [];
    });
  const inputOf = (task: string) =>
    linesOf(jobId).find((line) => line.includes(`  ${task}`) && / {2}download\s+on /.test(line));
  return { splitOn, completedOn, inputOf };
}

/** What every split job must come to: every frame once, one quota unit, one webhook, no scratch left. */
async function expectWhole(c: Client, id: string, hooks: Awaited<ReturnType<typeof startWebhookReceiver>>) {
  const numbers = await readFrameNumbers(await downloaded(c, id));
  expect(frameOrderProblem(numbers, FRAMES)).toBeNull();
  expect((await e2e.admin.showAccount(c.accountId)).usage.used).toBe(1);
  await hooks.waitFor(id);
  await new Promise((r) => setTimeout(r, 1000));
  expect(hooks.received.filter((h) => JSON.parse(h.body).jobId === id)).toHaveLength(1);
  await vi.waitFor(async () => expect(await storage().keys(scratchPrefix(id))).toEqual([]), { timeout: 15_000 });
}

describe("a split job on two encoders", () => {
  it("from an origin serving ranges: planned from there, every task reading its span from there, on both encoders; every frame once, one quota unit, one webhook, no scratch left", async () => {
    const hooks = await startWebhookReceiver();
    const c = await e2e.client();
    await e2e.admin.setWebhook(c.accountId, hooks.url);
    const id = await createJob(c);
    const job = await e2e.waitFor(c, id);
    expect(job.status, job.errorMessage ?? undefined).toBe("completed");
    expect(job.progress).toBe(1);
    const claimed = partsClaimed(id);
    expect(claimed.length).toBeGreaterThanOrEqual(5);
    expect(new Set(claimed.map((p) => p.encoder))).toEqual(new Set(["encoder-1", "encoder-2"]));
    expect(
      linesOf(id).some((line) =>
        /split\s+on \S+ {2}into \d+ parts and the audio .*, each to read its span of the source by ranges;/.test(line),
      ),
    ).toBe(true);
    // The splitting encoder kept the tasks the output's start waits for, the first part and the audio.
    const { splitOn, completedOn, inputOf } = tasksOf(id);
    expect(completedOn(/^part 1\//)).toEqual([splitOn]);
    expect(completedOn(/^audio$/)).toEqual([splitOn]);
    for (const task of [...new Set(claimed.map((p) => `part ${p.part}/`)), "audio"])
      expect(inputOf(task), task).toMatch(/ {2}download\s+on \S+ {2}[\d.]+ [KM]iB in \d/);
    expect(linesOf(id).some((line) => /claim\s+on \S+ .*, join of \d+ parts and the audio$/.test(line))).toBe(true);
    await expectWhole(c, id, hooks);
    await hooks.stop();
  });

  it("from an origin without ranges: downloaded once and cut into pieces, on both encoders; every frame once, one quota unit, one webhook, no scratch left", async () => {
    const hooks = await startWebhookReceiver();
    const c = await e2e.client();
    await e2e.admin.setWebhook(c.accountId, hooks.url);
    const id = await createJob(c, "mp4_264_480p", plainSource);
    const job = await e2e.waitFor(c, id);
    expect(job.status, job.errorMessage ?? undefined).toBe("completed");
    const claimed = partsClaimed(id);
    expect(new Set(claimed.map((p) => p.encoder))).toEqual(new Set(["encoder-1", "encoder-2"]));
    expect(
      linesOf(id).some((line) =>
        /split\s+on \S+ {2}into \d+ parts and the audio .*, each to read its piece from storage;/.test(line),
      ),
    ).toBe(true);
    // The first part ran beside the storing, on the splitting encoder (which kept it), under a
    // claim of its own; the audio's task ran once, and the join took it in.
    const { splitOn, completedOn, inputOf } = tasksOf(id);
    expect(completedOn(/^part 1\//)).toEqual([splitOn]);
    // From the piece on that encoder's disk, begun before the claim: no download of it, and its
    // encode's lines in the part's log all the same.
    expect(linesOf(id).filter((line) => / {2}part 1\/\d+ {2}download /.test(line))).toEqual([]);
    expect(linesOf(id).filter((line) => / {2}part 1\/\d+ {2}ffmpeg\s+on \S+ {2}finished in /.test(line))).toHaveLength(
      1,
    );
    expect(completedOn(/^audio$/)).toHaveLength(1);
    // Every other task read its input from the disk where it was cut when it ran on the
    // splitting encoder, and downloaded it from storage when it ran on the other.
    const others = [...new Set(claimed.map((p) => p.part))].filter((n) => n !== 1).map((n) => `part ${n}/`);
    for (const task of [...others, "audio"]) {
      const [on] = completedOn(new RegExp(`^${task}`));
      expect(inputOf(task), task).toMatch(on === splitOn ? /already on this encoder's disk/ : / in \d/);
    }
    await expectWhole(c, id, hooks);
    await hooks.stop();
  });

  it("an encoder killed mid-part loses only that part: it is done again, and the job completes with the same frames", async () => {
    const id = await createJob();
    // An encoder other than the splitting one: the tasks that one keeps have no message for QStash
    // to deliver again, and are given back by the sweep once quiet (docs/scaling.md#the-audio).
    const victim = await vi.waitFor(
      () => {
        const { splitOn } = tasksOf(id);
        const running = linesOf(id)
          .map((line) => / {2}part \d+\/\d+ {2}ffmpeg\s+on (\S+)/.exec(line)?.[1])
          .find((name) => name !== undefined && splitOn !== undefined && name !== splitOn);
        if (!running) throw new Error("no part encoding yet on the encoder that did not split the job");
        return running;
      },
      { timeout: 60_000, interval: 20 },
    );
    const encoder = e2e.stack.encoders.find((e) => e.name === victim);
    if (!encoder) throw new Error(`no encoder ${victim}`);
    const pid = encoder.pid();
    process.kill(pid, "SIGKILL");
    await encoder.readyAfter(pid);
    const job = await e2e.waitFor(client, id);
    expect(job.status, job.errorMessage ?? undefined).toBe("completed");
    expect(job.retryCount).toBe(0);
    expect(frameOrderProblem(await readFrameNumbers(await downloaded(client, id)), FRAMES)).toBeNull();
  });

  it("cancel during the parts: the job is cancelled, its parts stop, its scratch is deleted", async () => {
    const id = await createJob(client, "hls_abr_264_basic");
    await vi.waitFor(
      () => {
        if (partsClaimed(id).length === 0) throw new Error("no part claimed yet");
      },
      { timeout: 60_000, interval: 50 },
    );
    expectStatus(await client.cancelJob(id), 200);
    const job = await e2e.waitFor(client, id);
    expect(job.status).toBe("cancelled");
    await vi.waitFor(async () => expect(await storage().keys(scratchPrefix(id))).toEqual([]), { timeout: 15_000 });
    // No part is claimed, and nothing joins, once the job is cancelled: by the time every message
    // of the job has had its delivery (or was cancelled), none claimed anything.
    const claimsAtCancel = partsClaimed(id).length;
    await messagesSettled(id);
    expect(partsClaimed(id).length).toBe(claimsAtCancel);
    expect(linesOf(id).some((line) => /completed\s+on/.test(line))).toBe(false);
  });

  it("cancel during the split stage: the pieces stored so far are deleted, however the cancel and the uploads cross", async () => {
    const id = await createJob(client, "mp4_264_480p", plainSource);
    await vi.waitFor(
      () => {
        if (!linesOf(id).some((line) => /probe\s+on/.test(line))) throw new Error("not probed yet");
      },
      { timeout: 60_000, interval: 20 },
    );
    expectStatus(await client.cancelJob(id), 200);
    expect((await e2e.waitFor(client, id)).status).toBe("cancelled");
    // The encoder stops at its next heartbeat, or when the Worker refuses the split (or, if its
    // split was in first, the Worker deletes the scratch with the job).
    await vi.waitFor(
      () => {
        if (!linesOf(id).some((line) => /(cancelled|split)\s+on/.test(line)))
          throw new Error("the encoder is still on it");
      },
      { timeout: 30_000, interval: 100 },
    );
    // An upload given up as the job ended may land after the Worker's first deletion: the sweep
    // deletes the scratch again 10 s after the end (here on cron ticks, as the cron fires them),
    // and only that deletion settles the job's mark.
    await vi.waitFor(
      async () => {
        await fetch(`${e2e.stack.info.apiUrl}/cdn-cgi/handler/scheduled`);
        const [job] = await e2e.admin.db
          .select({ pending: jobs.scratchPendingSince })
          .from(jobs)
          .where(eq(jobs.id, id));
        expect(job.pending).toBeNull();
        expect(await storage().keys(scratchPrefix(id))).toEqual([]);
      },
      { timeout: 40_000, interval: 1000 },
    );
  });

  it("a part's input gone from storage: the job fails with the part's cause, and leaves no scratch", async () => {
    const id = await createJob(client, "mp4_264_480p", plainSource);
    const s3 = storage();
    // Deleted as soon as the split has stored them: the parts not yet begun find nothing.
    await vi.waitFor(
      async () => {
        const inputs = (await s3.keys(`${scratchPrefix(id)}in/`)).filter((k) => !k.endsWith("/audio"));
        if (inputs.length < 5) throw new Error("the pieces are not all stored yet");
        await Promise.all(inputs.map((k) => s3.remove(k)));
      },
      { timeout: 60_000, interval: 20 },
    );
    const job = await e2e.waitFor(client, id);
    expect(job.status).toBe("failed");
    expect(job.errorMessage).toMatch(/^Part \d+ of \d+: A part's input is no longer in storage/);
    await vi.waitFor(async () => expect(await s3.keys(scratchPrefix(id))).toEqual([]), { timeout: 15_000 });
  });
});
