import { connect } from "node:net";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { readEmulatedMessage } from "../../dev/cloud/qstash-emulator";
import type { FixtureServer } from "../e2e/fixtures";
import type { Client, E2E } from "../e2e/harness";
import { bodyOf } from "../support/api-client";
import { startFaultStack, type FaultStack } from "./stack";
import {
  expectOneUnitPerJob,
  expectOneWebhookPerFinalState,
  isClaim,
  onDatabase,
  startServiceFront,
  statementsOf,
  type FrontRequest,
  type FrontVerdict,
  type IdempotentReceiver,
} from "./support";

/**
 * The Worker's own services failing at the worst moment: its database (the Neon HTTP endpoint)
 * and QStash, each behind a front that fails the very statement or publish the test picks. A
 * job's webhook is never lost and never sent twice, whenever the failure falls; an outage while
 * the encoder claims or reports costs the job no attempt.
 */
let stack: FaultStack;
let e2e: E2E;
let fixtures: FixtureServer;
let receiver: IdempotentReceiver;
let database: Awaited<ReturnType<typeof startServiceFront>>;
let queue: Awaited<ReturnType<typeof startServiceFront>>;
let cache: Awaited<ReturnType<typeof startServiceFront>>;
let client: Client;
let secret: string;
const finished: { id: string; status: string }[] = [];

beforeAll(async () => {
  [database, queue, cache] = await Promise.all([startServiceFront(), startServiceFront(), startServiceFront()]);
  const workerEnv = {
    NEON_HTTP_ENDPOINT: `${database.url}/sql`,
    QSTASH_URL: queue.url,
    UPSTASH_REDIS_REST_URL: cache.url,
  };
  stack = await startFaultStack({ workerEnv }, (info) => {
    database.forwardTo(info.cloud.neonHttp);
    queue.forwardTo(info.cloud.qstash.url);
    cache.forwardTo(info.cloud.redis.url);
  });
  ({ e2e, fixtures, receiver, client, secret } = stack);
  await fixtures.source("short.mp4", { seconds: 1, width: 160, height: 90, fps: 15 });
});
afterAll(async () => {
  await stack?.stop();
  await Promise.all([database?.stop(), queue?.stop(), cache?.stop()]);
});

const anyStatement = (req: FrontRequest, test: (s: { query: string; params: unknown[] }) => boolean) =>
  statementsOf(req).some(test);

/** The state table's moves (lib/job-states/) as they reach the database. */
const isCompletion = (req: FrontRequest) =>
  anyStatement(req, (s) => s.query.includes('update "jobs"') && s.params.includes("completed"));
/** The step after a job finishes: its account's webhook looked up. */
const isWebhookLookup = (req: FrontRequest) =>
  anyStatement(req, (s) => s.query.startsWith('select "webhook_url", "webhook_secret" from "accounts"'));
/** The sweep's first step listing the processing jobs whose heartbeat stopped (lib/sweep.ts). */
const isStaleListing = (req: FrontRequest) =>
  anyStatement(
    req,
    (s) => s.query.startsWith('select "id", "interruptions" from "jobs"') && s.params.includes("processing"),
  );
/** A creation's publish of its job, to the encoder's deliveries. */
const isJobPublish = (req: FrontRequest) =>
  req.url.startsWith("/v2/publish/") && decodeURIComponent(req.url).includes("/deliveries/jobs");
/** A creation's step when the queue refused its job: the job failed and its unit released. */
const isUnqueuedFailure = (req: FrontRequest) =>
  anyStatement(req, (s) => s.params.some((p) => String(p).startsWith("The job could not be queued")));
/** Creation's last step: the QStash message id noted on the job. */
const isMessageRecord = (req: FrontRequest) =>
  anyStatement(req, (s) => s.query.startsWith('update "jobs" set "message_id"'));
const isWebhookPublish = (req: FrontRequest) =>
  req.url.startsWith("/v2/publish/") && decodeURIComponent(req.url).includes("/internal/webhook-deliveries");

/** `verdict` for the first `times` requests `picked`; everything else passes. */
function failFirst(times: number, picked: (req: FrontRequest) => boolean, verdict: FrontVerdict) {
  let left = times;
  return (req: FrontRequest): FrontVerdict => {
    if (left === 0 || !picked(req)) return "pass";
    left -= 1;
    return verdict;
  };
}

/** From the first request `picked`, every request is refused for `ms`: the database is down. */
function outageFrom(picked: (req: FrontRequest) => boolean, ms: number) {
  let until: number | undefined;
  return (req: FrontRequest): FrontVerdict => {
    if (until === undefined && picked(req)) until = Date.now() + ms;
    return until !== undefined && Date.now() < until ? "refuse" : "pass";
  };
}

const passAll = () => "pass" as const;

async function createJob(inputUrl = fixtures.url("short.mp4")) {
  return bodyOf(await client.createJob({ inputUrl, preset: "mp4_264_240p" }), 201).id;
}

async function finish(jobId: string) {
  const job = await e2e.waitFor(client, jobId);
  finished.push({ id: job.id, status: job.status });
  return job;
}

const stageLines = (jobId: string) => stack.stageLines(jobId);
const accepted = (jobId: string) => [...receiver.accepted().values()].filter((payload) => payload.jobId === jobId);

/** What the cron does every minute in production: the sweep (here every 2 s, as the test waits). */
async function whileSweeping<T>(work: () => Promise<T>): Promise<T> {
  const tick = () => fetch(`${e2e.stack.info.apiUrl}/cdn-cgi/handler/scheduled`).catch(() => undefined);
  const cron = setInterval(tick, 2000);
  try {
    return await work();
  } finally {
    clearInterval(cron);
  }
}

/**
 * Moves jobs' webhooks past the outbox's grace (10 s, lib/webhooks.ts), so the next sweep takes
 * them rather than the one after the grace runs out: what the sweep does then is the test's point,
 * not the wait.
 */
const pastTheOutboxGrace = (...jobIds: string[]) =>
  onDatabase(e2e.stack.info.databaseUrl, (db) =>
    db.query("update jobs set webhook_pending_since = webhook_pending_since - interval '1 minute' where id = any($1)", [
      jobIds,
    ]),
  );

const webhookArrives = (jobId: string, timeout = 60_000) =>
  vi.waitFor(() => expect(accepted(jobId)).toHaveLength(1), { timeout, interval: 250 });

describe("the webhook of a finished job is never lost", () => {
  it("the Worker commits a completion and loses its answer: the encoder reports again, is told it is done, and the webhook goes out", async () => {
    database.judge(failFirst(1, isCompletion, "lose-answer"));
    const jobId = await createJob();
    const job = await finish(jobId);
    database.judge(passAll);
    expect(job, job.errorMessage ?? undefined).toMatchObject({ status: "completed", retryCount: 0 });
    await webhookArrives(jobId, 30_000);
    const lines = stageLines(jobId);
    expect(lines.filter((l) => l.startsWith("claim "))).toHaveLength(1);
    expect(
      lines.some((l) => /^worker +on \S+ +complete not taken/.test(l)),
      lines.join("\n"),
    ).toBe(true);
    expect(lines.at(-1)).toMatch(/^completed /);
    expect(lines.filter((l) => l.startsWith("failed "))).toEqual([]);
  });

  it("the account lookup after a completion and after a final failure fails: the sweep publishes both webhooks, its other steps failing meanwhile", async () => {
    const lookups = failFirst(2, isWebhookLookup, "refuse");
    // A step that cannot list its jobs is the sweep's to log and step past, not a stop for the outbox.
    database.judge((req) => (isStaleListing(req) ? "refuse" : lookups(req)));
    // A redirect to a URL with credentials is refused at once, not retried: a final failure.
    const refused = fixtures.url(
      `redirect?to=${encodeURIComponent(fixtures.url("short.mp4").replace("http://", "http://user:pw@"))}`,
    );
    const [completed, failed] = await Promise.all([createJob(), createJob(refused)]);
    const jobs = await Promise.all([finish(completed), finish(failed)]);
    expect(jobs.map((j) => j.status)).toEqual(["completed", "failed"]);
    expect(database.verdicts().filter((v) => v.verdict === "refuse" && isWebhookLookup(v.request))).toHaveLength(2);
    await pastTheOutboxGrace(completed, failed);
    await whileSweeping(() => Promise.all([webhookArrives(completed), webhookArrives(failed)]));
    expect(database.verdicts().some((v) => v.verdict === "refuse" && isStaleListing(v.request))).toBe(true);
    database.judge(passAll);
  });

  it("QStash cannot be reached for the publish: the sweep publishes it once QStash is back", async () => {
    queue.judge(failFirst(2, isWebhookPublish, "refuse"));
    const jobId = await createJob();
    expect((await finish(jobId)).status).toBe("completed");
    // The completion's own publish refused first; then the sweep's turn.
    await vi.waitFor(() =>
      expect(queue.verdicts().some((v) => isWebhookPublish(v.request) && v.verdict === "refuse")).toBe(true),
    );
    await pastTheOutboxGrace(jobId);
    await whileSweeping(() => webhookArrives(jobId));
    expect(queue.verdicts().filter((v) => isWebhookPublish(v.request) && v.verdict === "refuse")).toHaveLength(2);
    queue.judge(passAll);
  });

  it("QStash takes the publish but its answers are lost: published again under the same deduplication id, one webhook", async () => {
    const before = queue.verdicts().length;
    queue.judge(failFirst(2, isWebhookPublish, "lose-answer"));
    const jobId = await createJob();
    expect((await finish(jobId)).status).toBe("completed");
    await vi.waitFor(() =>
      expect(
        queue
          .verdicts()
          .slice(before)
          .some((v) => isWebhookPublish(v.request) && v.verdict === "lose-answer"),
      ).toBe(true),
    );
    await pastTheOutboxGrace(jobId);
    await whileSweeping(async () => {
      await webhookArrives(jobId);
      // The sweep published it again (its publications looked lost to the Worker).
      await vi.waitFor(
        () =>
          expect(
            queue
              .verdicts()
              .slice(before)
              .filter((v) => isWebhookPublish(v.request)).length,
          ).toBeGreaterThanOrEqual(3),
        { timeout: 60_000 },
      );
    });
    queue.judge(passAll);
    // Long enough for a second message, had QStash enqueued one, to reach the receiver (its first attempt and retry).
    await new Promise((r) => setTimeout(r, 5000));
    expect(
      receiver
        .deliveries()
        .filter((d) => JSON.parse(d.body).jobId === jobId)
        .map((d) => d.answered),
    ).toEqual([500, 200]);
  });
});

describe("a creation whose message id is not recorded", () => {
  it("the database refuses the record after the publish: still a 201, as the job is queued; it runs once", async () => {
    database.judge(failFirst(1, isMessageRecord, "refuse"));
    const jobId = await createJob();
    database.judge(passAll);
    expect(database.verdicts().filter((v) => v.verdict === "refuse" && isMessageRecord(v.request))).toHaveLength(1);
    const job = await finish(jobId);
    expect(job, job.errorMessage ?? undefined).toMatchObject({ status: "completed", retryCount: 0 });
    expect(stageLines(jobId).filter((l) => l.startsWith("claim "))).toHaveLength(1);
    await webhookArrives(jobId, 30_000);
  });
});

describe("a creation the queue refuses and the database cannot fail", () => {
  it("QStash refuses the publish and the database the job's failure: a 201, and the sweep publishes the job, which runs once", async () => {
    queue.judge((req) => (isJobPublish(req) ? "refuse" : "pass"));
    database.judge(failFirst(1, isUnqueuedFailure, "refuse"));
    const jobId = await createJob();
    queue.judge(passAll);
    database.judge(passAll);
    expect(database.verdicts().filter((v) => v.verdict === "refuse" && isUnqueuedFailure(v.request))).toHaveLength(1);
    // The sweep publishes a queued job that has no message 30 s after it was queued: that long ago.
    await onDatabase(e2e.stack.info.databaseUrl, (db) =>
      db.query("update jobs set created_at = created_at - interval '1 minute' where id = $1", [jobId]),
    );
    const job = await whileSweeping(() => finish(jobId));
    expect(job, job.errorMessage ?? undefined).toMatchObject({ status: "completed", retryCount: 0 });
    expect(stageLines(jobId).filter((l) => l.startsWith("claim "))).toHaveLength(1);
    await webhookArrives(jobId, 30_000);
  }, 120_000);
});

describe("a creation the queue refuses", () => {
  it("a 500 and a failed job, whose job.failed webhook goes out once QStash takes messages again (contract §7: a failed job triggers it)", async () => {
    const unqueued = async () =>
      bodyOf(await client.listJobs({ status: "failed", limit: 100 }), 200).jobs.filter((job) =>
        /could not be queued/.test(job.errorMessage ?? ""),
      );
    const before = new Set((await unqueued()).map((job) => job.id));
    queue.judge((req) => (isJobPublish(req) ? "refuse" : "pass"));
    const refused = await client.createJob({ inputUrl: fixtures.url("short.mp4"), preset: "mp4_264_240p" });
    queue.judge(passAll);
    expect(refused.status).toBe(500);
    const [job] = (await unqueued()).filter((j) => !before.has(j.id));
    expect(job).toBeDefined();
    // No step after the refusal published it: the sweep takes it.
    await pastTheOutboxGrace(job.id);
    await whileSweeping(() => webhookArrives(job.id, 30_000));
    expect(accepted(job.id)[0]).toMatchObject({ event: "job.failed", outputUrl: null, errorMessage: job.errorMessage });
    // Not among `finished`: it holds no quota unit.
    expectOneWebhookPerFinalState(receiver, secret, [{ id: job.id, status: "failed" }]);
  });
});

describe("a creation whose publish failed though its message got through", () => {
  it("QStash's answers are lost, and the encoder has claimed the job before the creation gives up: a 201, as the job runs, holding its one unit", async () => {
    let claimed!: () => void;
    const claimSeen = new Promise<void>((resolve) => (claimed = resolve));
    database.judge((req) => {
      if (isClaim(req)) claimed();
      return "pass";
    });
    // The first publish reaches QStash, which delivers the job; its answer is held until the
    // encoder's claim and then lost, as is the answer to the client's one retry.
    let publishes = 0;
    queue.judge((req) =>
      isJobPublish(req) ? (++publishes === 1 ? { loseAnswerOnce: claimSeen } : "lose-answer") : "pass",
    );
    const jobId = await createJob();
    queue.judge(passAll);
    database.judge(passAll);
    expect(publishes).toBeGreaterThanOrEqual(2);
    const job = await finish(jobId);
    expect(job, job.errorMessage ?? undefined).toMatchObject({ status: "completed", retryCount: 0 });
    expect(stageLines(jobId).filter((l) => l.startsWith("claim "))).toHaveLength(1);
    await webhookArrives(jobId, 30_000);
  });
});

describe("a creation under an Idempotency-Key whose answer is not recorded", () => {
  it("the cache refuses the record: still the 201; a retry under the key is refused as in progress and creates nothing", async () => {
    const isAnswerRecord = (req: FrontRequest) => req.body.includes("idem:") && /state\\?":\\?"done/.test(req.body);
    cache.judge((req) => (isAnswerRecord(req) ? "refuse" : "pass"));
    const idempotencyKey = `unrecorded-${Date.now()}`;
    const body = { inputUrl: fixtures.url("short.mp4"), preset: "mp4_264_240p" as const };
    const jobId = bodyOf(await client.createJob(body, { idempotencyKey }), 201).id;
    expect(cache.verdicts().some((v) => v.verdict === "refuse" && isAnswerRecord(v.request))).toBe(true);
    cache.judge(passAll);
    const retry = await client.createJob(body, { idempotencyKey });
    expect(retry.status).toBe(409);
    expect(await finish(jobId)).toMatchObject({ status: "completed" });
  });
});

describe("a client that goes away while its creation runs", () => {
  /** Sends a creation (under `idempotencyKey` if given) on a connection of its own, which the caller resets. */
  function sendAndStay(body: object, idempotencyKey?: string) {
    const { hostname, port } = new URL(e2e.stack.info.apiUrl);
    const socket = connect(Number(port), hostname);
    const json = JSON.stringify(body);
    socket.write(
      `POST /api/v1/jobs HTTP/1.1\r\nHost: ${hostname}\r\nAuthorization: Bearer ${client.key}\r\nContent-Type: application/json\r\n` +
        `${idempotencyKey ? `Idempotency-Key: ${idempotencyKey}\r\n` : ""}Content-Length: ${Buffer.byteLength(json)}\r\n\r\n${json}`,
    );
    socket.on("error", () => undefined);
    return socket;
  }

  /** A creation whose client resets its connection while the creation's statement is out. */
  async function abandonedMidway(body: object, idempotencyKey?: string) {
    let seen!: () => void;
    const creationSeen = new Promise<void>((resolve) => (seen = resolve));
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    database.judge((req) => {
      if (!anyStatement(req, (s) => s.query.includes('insert into "jobs"'))) return "pass";
      seen();
      return { holdAnswerUntil: released };
    });
    const socket = sendAndStay(body, idempotencyKey);
    await creationSeen;
    socket.resetAndDestroy();
    // The Worker meets the reset while its statement is still out, as a client's timeout would fall.
    await new Promise((resolve) => setTimeout(resolve, 500));
    release();
    database.judge(passAll);
  }

  it("under an Idempotency-Key: the creation still ends, and a retry under the key gets its job (it was 409 for a day)", async () => {
    const idempotencyKey = `gone-${Date.now()}`;
    const body = { inputUrl: fixtures.url("short.mp4"), preset: "mp4_264_240p" as const };
    await abandonedMidway(body, idempotencyKey);
    const retry = await vi.waitFor(
      async () => {
        const answer = await client.createJob(body, { idempotencyKey });
        expect(answer.status).toBe(201);
        return answer;
      },
      { timeout: 15_000, interval: 250 },
    );
    expect(retry.headers.get("Idempotent-Replayed")).toBe("true");
    expect(await finish(bodyOf(retry, 201).id)).toMatchObject({ status: "completed", retryCount: 0 });
  });

  it("without a key: the creation still publishes its job, which runs at once, not when a sweep finds it unannounced", async () => {
    const before = new Set(bodyOf(await client.listJobs({ limit: 100 }), 200).jobs.map((job) => job.id));
    await abandonedMidway({ inputUrl: fixtures.url("short.mp4"), preset: "mp4_264_240p" });
    const created = await vi.waitFor(
      async () => {
        const [job] = bodyOf(await client.listJobs({ limit: 100 }), 200).jobs.filter((job) => !before.has(job.id));
        expect(job).toBeDefined();
        return job;
      },
      { timeout: 10_000, interval: 250 },
    );
    // No sweep runs here: a job left unpublished would stay queued.
    const job = await e2e.waitFor(client, created.id, undefined, 60_000);
    finished.push({ id: job.id, status: job.status });
    expect(job).toMatchObject({ status: "completed", retryCount: 0 });
  });
});

describe("an outage of the Worker's database while the encoder claims or reports costs no attempt", () => {
  it("down from the completion's report for 6 s: the report is asked again until it is taken, and the job completes on its first attempt", async () => {
    database.judge(outageFrom(isCompletion, 6000));
    const jobId = await createJob();
    const job = await finish(jobId);
    database.judge(passAll);
    expect(job, job.errorMessage ?? undefined).toMatchObject({ status: "completed", retryCount: 0 });
    const lines = stageLines(jobId);
    expect(lines.filter((l) => l.startsWith("claim "))).toEqual([expect.stringMatching(/attempt 1 of 3/)]);
    expect(lines.filter((l) => /^worker +on \S+ +complete not taken/.test(l)).length).toBeGreaterThan(0);
    await webhookArrives(jobId, 30_000);
  });

  it("down from the claim for 6 s: the claim is asked again, no delivery is spent, and the job completes on its first attempt", async () => {
    database.judge(outageFrom(isClaim, 6000));
    const jobId = await createJob();
    const job = await finish(jobId);
    database.judge(passAll);
    expect(job, job.errorMessage ?? undefined).toMatchObject({ status: "completed", retryCount: 0 });
    const lines = stageLines(jobId);
    expect(lines.filter((l) => /^worker +on \S+ +claim not taken/.test(l)).length).toBeGreaterThan(0);
    expect(lines.filter((l) => l.startsWith("claim "))).toEqual([expect.stringMatching(/attempt 1 of 3/)]);
    await webhookArrives(jobId, 30_000);
  });
});

describe("the Worker's cache, which records each internal call's nonce, failing while the encoder claims", () => {
  /** A command on a nonce's record, as the Upstash client sends it (a JSON array naming the key). */
  const isNonceCommand = (req: FrontRequest) => req.body.includes('"internal-nonce:');

  it("the first record's answer is lost: the client's resend of it is not taken for a replay, and the claim goes through at once", async () => {
    cache.judge(failFirst(1, isNonceCommand, "lose-answer"));
    const jobId = await createJob();
    const job = await finish(jobId);
    cache.judge(passAll);
    expect(job, job.errorMessage ?? undefined).toMatchObject({ status: "completed", retryCount: 0 });
    expect(cache.verdicts().some((v) => v.verdict === "lose-answer" && isNonceCommand(v.request))).toBe(true);
    const lines = stageLines(jobId);
    expect(
      lines.filter((l) => /^worker +on \S+ +claim not taken/.test(l)),
      lines.join("\n"),
    ).toEqual([]);
  });

  it("down from the claim for 6 s: each call is refused with a 503, not let through unchecked; asked again, freshly signed, the job completes on its first attempt", async () => {
    // Only the nonces' records fail: the API keys' cached lookups, which the test's polling needs, pass.
    const outage = outageFrom(isNonceCommand, 6000);
    cache.judge((req) => (isNonceCommand(req) ? outage(req) : "pass"));
    const jobId = await createJob();
    const job = await finish(jobId);
    cache.judge(passAll);
    expect(job, job.errorMessage ?? undefined).toMatchObject({ status: "completed", retryCount: 0 });
    const lines = stageLines(jobId);
    const notTaken = lines.filter((l) => /^worker +on \S+ +claim not taken/.test(l));
    expect(notTaken.length, lines.join("\n")).toBeGreaterThan(0);
    expect(
      notTaken.every((l) => l.includes("answered 503")),
      notTaken.join("\n"),
    ).toBe(true);
    expect(lines.filter((l) => l.startsWith("claim "))).toEqual([expect.stringMatching(/attempt 1 of 3/)]);
    await webhookArrives(jobId, 30_000);
  });
});

describe("a cancel whose message QStash fails to delete (contract §4.3, rule 2)", () => {
  /** The encoder's claim of one job: the statement names the job. */
  const isClaimOf = (jobId: string) => (req: FrontRequest) =>
    isClaim(req) && anyStatement(req, (s) => s.params.includes(jobId));
  const isDeleteOf = (messageId: string) => (req: FrontRequest) =>
    req.method === "DELETE" && req.url === `/v2/messages/${messageId}`;
  const messageState = async (messageId: string) =>
    (await readEmulatedMessage(e2e.stack.info.cloud.qstash, messageId)).state;
  /** The Worker's JSON log lines from the `from`th line of the stack's log on. */
  const workerLogSince = (from: number) =>
    stack.logs.slice(from).flatMap((l) => {
      const json = l.line.indexOf("{");
      if (l.source !== "worker" || json < 0) return [];
      try {
        return [JSON.parse(l.line.slice(json)) as { msg?: string; jobId?: string; error?: { message?: string } }];
      } catch {
        return [];
      }
    });

  it("the job is cancelled and the cancel answers 200, the failure is logged with its cause, and the message, delivered anyway, is refused at its claim", async () => {
    // Two jobs take the two deliveries QStash makes at a time (contract §9.1), their claims held
    // at the database, so the third job's message waits in QStash, where the cancel finds it.
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    const held: FrontRequest[] = [];
    database.judge((req) => {
      if (!isClaim(req)) return "pass";
      held.push(req);
      return { holdAnswerUntil: released };
    });
    const busy = await Promise.all([createJob(), createJob()]);
    await vi.waitFor(() => expect(busy.filter((id) => held.some(isClaimOf(id)))).toEqual(busy), { timeout: 30_000 });
    database.judge(passAll);
    const jobId = await createJob();
    const messageId = await vi.waitFor(async () => {
      const [row] = (
        await onDatabase(e2e.stack.info.databaseUrl, (db) =>
          db.query<{ message_id: string | null }>("select message_id from jobs where id = $1", [jobId]),
        )
      ).rows;
      expect(row?.message_id).toBeTruthy();
      return row.message_id as string;
    });
    expect(await messageState(messageId)).toBe("waiting");

    queue.judge((req) => (isDeleteOf(messageId)(req) ? "refuse" : "pass"));
    const logged = stack.logs.length;
    const statementsBefore = database.verdicts().length;
    const cancel = await client.cancelJob(jobId);
    expect(bodyOf(cancel, 200)).toMatchObject({
      id: jobId,
      status: "cancelled",
      message: "Job cancelled successfully",
    });
    expect(queue.verdicts().some((v) => v.verdict === "refuse" && isDeleteOf(messageId)(v.request))).toBe(true);
    const failure = await vi.waitFor(() => {
      const line = workerLogSince(logged).find((l) => l.jobId === jobId && /could not be deleted/.test(l.msg ?? ""));
      expect(line).toBeDefined();
      return line;
    });
    // The cause is the front's: it dropped the connection of QStash's delete.
    expect(failure?.error?.message).toMatch(/connection lost/i);
    expect(failure?.msg).toMatch(/refused at its claim/);
    queue.judge(passAll);
    expect(await messageState(messageId)).toBe("waiting");

    release();
    for (const job of await Promise.all(busy.map(finish))) expect(job.status).toBe("completed");
    // Delivered, and answered: the encoder's claim was refused with the job cancelled, so it had nothing to run.
    await vi.waitFor(async () => expect(await messageState(messageId)).toBe("delivered"), { timeout: 30_000 });
    expect(
      database
        .verdicts()
        .slice(statementsBefore)
        .some((v) => isClaimOf(jobId)(v.request)),
    ).toBe(true);
    expect(stageLines(jobId).filter((l) => l.startsWith("claim "))).toEqual([]);
    const job = bodyOf(await client.getJob(jobId), 200);
    expect(job).toMatchObject({ status: "cancelled", outputUrl: null });
    expect(job.metadata.startedAt).toBeNull();
    await Promise.all(busy.map((id) => webhookArrives(id, 30_000)));
  });
});

describe("across every fault above", () => {
  it("one quota unit per job, and one webhook per final state, each retried under one webhook-id", async () => {
    await expectOneUnitPerJob(e2e.stack.info.databaseUrl, client.accountId, finished.length);
    expectOneWebhookPerFinalState(receiver, secret, finished);
  });
});
