import { randomUUID } from "node:crypto";
import { eq, sql } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { accounts, apiKeys, jobs, usage, type Job } from "../../drizzle/schema";
import { JOB_DELIVERY_RETRIES, JOB_STATUSES, type JobStatus, MAX_INTERRUPTIONS, outputKeyFor } from "../../domain/jobs";
import { PLAN_IDS, type PlanId } from "../../domain/plans";
import type { Caller } from "../../worker/context";
import * as jobStates from "../../worker/lib/job-states";
import type { Database } from "../../worker/services/db";
import { openScratchDatabase } from "../support/http-database";

/**
 * The Worker's state table (worker/lib/job-states/) against PostgreSQL, through the Neon HTTP
 * stand-in and the driver the Worker uses. A database of its own, so counts are exact.
 */
let database: Awaited<ReturnType<typeof openScratchDatabase>>;
let db: Database;
/** Fixtures go straight to the database, not through the module under test. */
let direct: typeof database.direct;

beforeAll(async () => {
  database = await openScratchDatabase("vep_transitions");
  ({ db, direct } = database);
});

afterAll(() => database?.close());

const PERIOD = "2026-11";
const STALE = 120_000;
const cutoff = () => new Date(Date.now() - 60_000);

async function newAccount() {
  const [account] = await direct.insert(accounts).values({ plan: "free" }).returning();
  return account;
}

/** A job in `status`, written directly; heartbeat stale, counts and message as the transition under test needs. */
async function jobIn(
  status: JobStatus,
  opts: { stale?: boolean; retryCount?: number; interruptions?: number; dispatch?: number; messageId?: string } = {},
): Promise<Job> {
  const account = await newAccount();
  await direct.insert(usage).values({ accountId: account.id, period: PERIOD, count: 1 });
  const [job] = await direct
    .insert(jobs)
    .values({
      accountId: account.id,
      status,
      preset: "mp4_264_720p",
      inputUrl: "https://media.example.com/a.mp4",
      quotaPeriod: PERIOD,
      retryCount: opts.retryCount ?? 0,
      interruptions: opts.interruptions ?? 0,
      dispatch: opts.dispatch ?? 0,
      messageId: opts.messageId ?? null,
      lastCheckedAt: new Date(Date.now() - (opts.stale ? STALE : 0)),
    })
    .returning();
  return job;
}

const reread = async (id: string) => (await direct.select().from(jobs).where(eq(jobs.id, id)))[0];

/** How each transition is invoked, and the fixture under which its own condition holds. */
const LOST = "msg_lost";
const transitions: Record<
  jobStates.TransitionName,
  { fixture?: Parameters<typeof jobIn>[1]; run: (job: Job) => ReturnType<typeof jobStates.claim> }
> = {
  queueRefused: { run: (job) => jobStates.failUnqueued(db, job.id, "The job could not be queued.") },
  // A stale heartbeat: a job still processing may be claimed again only once its encoder went quiet.
  claim: { fixture: { stale: true }, run: (job) => jobStates.claim(db, job.id, 0, "whole") },
  claimInterrupted: {
    fixture: { stale: true, interruptions: MAX_INTERRUPTIONS },
    run: (job) => jobStates.claimInterrupted(db, job.id, 0),
  },
  // The fixture's job has had no claim: its latest is claim 0.
  heartbeat: { run: (job) => jobStates.heartbeat(db, job.id, 0, { progress: 0.5 }) },
  complete: {
    run: (job) =>
      jobStates.complete(db, job.id, 0, {
        outputKey: outputKeyFor(job.accountId, job.id, "output.mp4"),
        duration: 9.5,
      }),
  },
  fail: { run: (job) => jobStates.fail(db, job.id, 0, { errorMessage: "Download failed", duration: null }) },
  retry: { run: (job) => jobStates.retry(db, job.id, 0) },
  cancel: { run: (job) => jobStates.cancel(db, { id: job.id, accountId: job.accountId }) },
  sweepRequeue: { fixture: { stale: true }, run: (job) => jobStates.sweepRequeue(db, job.id, cutoff()) },
  sweepFail: {
    fixture: { stale: true, interruptions: MAX_INTERRUPTIONS },
    run: (job) => jobStates.sweepFail(db, job.id, cutoff()),
  },
  lostMessageRequeue: {
    fixture: { messageId: LOST },
    run: (job) => jobStates.lostMessageRequeue(db, job.id, LOST),
  },
  lostMessageFail: {
    fixture: { messageId: LOST, interruptions: MAX_INTERRUPTIONS },
    run: (job) => jobStates.lostMessageFail(db, job.id, LOST, "The job could not be dispatched to an encoder: …"),
  },
};

/**
 * The contract's table (docs/contract.md §4.2), written out here rather than read from
 * the module, so a change to the module's table shows as a failure. Beyond the contract's rows:
 * a redelivered claim of a job already processing (and its failure once the job's interruptions
 * are spent), the heartbeat (processing stays processing), the retry's wait in the queue, the
 * sweep's two moves and the two after QStash gave up on a job's message (docs/operations.md, the sweep).
 */
const CONTRACT: Record<jobStates.TransitionName, { from: JobStatus[]; to: JobStatus }> = {
  queueRefused: { from: ["queued"], to: "failed" },
  claim: { from: ["queued", "processing"], to: "processing" },
  claimInterrupted: { from: ["processing"], to: "failed" },
  heartbeat: { from: ["processing"], to: "processing" },
  complete: { from: ["processing"], to: "completed" },
  fail: { from: ["processing"], to: "failed" },
  retry: { from: ["processing"], to: "queued" },
  cancel: { from: ["queued", "processing"], to: "cancelled" },
  sweepRequeue: { from: ["processing"], to: "queued" },
  sweepFail: { from: ["processing"], to: "failed" },
  lostMessageRequeue: { from: ["queued"], to: "queued" },
  lostMessageFail: { from: ["queued"], to: "failed" },
};

describe("contract §4 States and transitions › the table, walked against the database", () => {
  it("the Worker's table is the contract's", () => {
    expect(jobStates.TRANSITIONS).toEqual(CONTRACT);
  });

  const cases = Object.entries(CONTRACT).flatMap(([name, { from, to }]) =>
    JOB_STATUSES.map((status) => ({ name: name as jobStates.TransitionName, status, from, to })),
  );

  it.each(cases)("$name from $status", async ({ name, status, from, to }) => {
    const { fixture, run } = transitions[name];
    const job = await jobIn(status, fixture);
    const outcome = await run(job);
    const after = await reread(job.id);
    if (from.includes(status)) {
      expect(outcome).toMatchObject({ moved: true, previous: status, job: { id: job.id, status: to } });
      expect(after.status).toBe(to);
      // docs/contract.md §7: every job that ends completed or failed sends the webhook, a job the
      // queue refused included.
      if (to === "completed" || to === "failed") expect(after.webhookPendingSince).toEqual(expect.any(Date));
    } else {
      expect(outcome).toEqual({ moved: false, found: status });
      expect(after).toEqual(job);
    }
  });

  it("every state and every transition is walked", () => {
    expect(cases).toHaveLength(Object.keys(CONTRACT).length * JOB_STATUSES.length);
    expect(new Set(Object.values(CONTRACT).flatMap((t) => [...t.from, t.to]))).toEqual(new Set(JOB_STATUSES));
  });

  it("an unknown job, a malformed id, or another account's job: nothing moves, no state is told", async () => {
    const job = await jobIn("queued");
    const other = await newAccount();
    expect(await jobStates.cancel(db, { id: job.id, accountId: other.id })).toEqual({ moved: false, found: null });
    expect(await jobStates.claim(db, "6b1f3c1e-8c1a-4c63-9b8e-1d5a3f1e2c4b", 0, "whole")).toEqual({
      moved: false,
      found: null,
    });
    expect(await jobStates.claim(db, "not-a-uuid", 0, "whole")).toEqual({ moved: false, found: null });
    expect((await reread(job.id)).status).toBe("queued");
  });

  it("the sweep's conditions: a heartbeat since the cutoff, or interruptions left (or none) decide", async () => {
    const fresh = await jobIn("processing", { stale: false });
    expect(await jobStates.sweepRequeue(db, fresh.id, cutoff())).toEqual({ moved: false, found: "processing" });
    const spent = await jobIn("processing", { stale: true, interruptions: MAX_INTERRUPTIONS });
    expect(await jobStates.sweepRequeue(db, spent.id, cutoff())).toEqual({ moved: false, found: "processing" });
    const left = await jobIn("processing", { stale: true, interruptions: MAX_INTERRUPTIONS - 1, retryCount: 1 });
    expect(await jobStates.sweepFail(db, left.id, cutoff())).toEqual({ moved: false, found: "processing" });
    const requeued = await jobStates.sweepRequeue(db, left.id, cutoff());
    // An interruption, the next dispatch, and a new lease that fences off the quiet encoder: the source's attempts are not touched.
    expect(requeued).toMatchObject({
      moved: true,
      job: {
        status: "queued",
        retryCount: 1,
        interruptions: MAX_INTERRUPTIONS,
        dispatch: 1,
        lease: 1,
        messageId: null,
      },
    });
  });

  it("a lost message's moves: only a job still waiting on that message moves, by interruptions left (or none), and once", async () => {
    const elsewhere = await jobIn("queued", { messageId: "msg_newer" });
    expect(await jobStates.lostMessageRequeue(db, elsewhere.id, LOST)).toEqual({ moved: false, found: "queued" });
    const spent = await jobIn("queued", { messageId: LOST, interruptions: MAX_INTERRUPTIONS });
    expect(await jobStates.lostMessageRequeue(db, spent.id, LOST)).toEqual({ moved: false, found: "queued" });
    const left = await jobIn("queued", { messageId: LOST, interruptions: MAX_INTERRUPTIONS - 1 });
    expect(await jobStates.lostMessageFail(db, left.id, LOST, "x")).toEqual({ moved: false, found: "queued" });
    const [requeued, again] = await Promise.all([
      jobStates.lostMessageRequeue(db, left.id, LOST),
      jobStates.lostMessageRequeue(db, left.id, LOST),
    ]);
    expect([requeued, again].filter((o) => o.moved)).toEqual([
      expect.objectContaining({
        job: expect.objectContaining({
          status: "queued",
          retryCount: 0,
          interruptions: MAX_INTERRUPTIONS,
          dispatch: 1,
          messageId: null,
        }),
      }),
    ]);
    const failed = await jobStates.lostMessageFail(
      db,
      spent.id,
      LOST,
      "The job could not be dispatched to an encoder: …",
    );
    expect(failed).toMatchObject({
      moved: true,
      job: { status: "failed", retryCount: 0, webhookPendingSince: expect.any(Date) },
    });
    expect(await jobStates.lostMessageFail(db, spent.id, LOST, "again")).toEqual({ moved: false, found: "failed" });
    const units = await direct.select({ count: usage.count }).from(usage).where(eq(usage.accountId, spent.accountId));
    expect(units).toEqual([{ count: 1 }]);
  });

  it("claim: only the current dispatch claims; a job still processing only once its heartbeat went quiet, counting an interruption", async () => {
    const job = await jobIn("queued", { retryCount: 2, dispatch: 3 });
    const at = (iso: string) => new Date(`2026-11-20T09:${iso}.000Z`);
    expect(await jobStates.claim(db, job.id, 2, "whole", at("30:00"))).toEqual({ moved: false, found: "queued" });
    const first = await jobStates.claim(db, job.id, 3, "whole", at("30:00"));
    expect(first).toMatchObject({
      moved: true,
      job: { retryCount: 2, lease: 1, interruptions: 0, startedAt: at("30:00"), lastCheckedAt: at("30:00") },
    });
    // Its encoder beat 5 s ago: the job stays with it.
    expect(await jobStates.claim(db, job.id, 3, "whole", at("30:05"))).toEqual({ moved: false, found: "processing" });
    const again = await jobStates.claim(db, job.id, 3, "whole", at("30:20"));
    expect(again).toMatchObject({
      moved: true,
      previous: "processing",
      job: { retryCount: 2, lease: 2, interruptions: 1, startedAt: at("30:00") },
    });
    // The first claim's encoder is fenced off: its beats and reports are refused.
    expect(await jobStates.heartbeat(db, job.id, 1, { progress: 0.9 })).toEqual({
      moved: false,
      found: "processing",
    });
    expect(await jobStates.complete(db, job.id, 1, { outputKey: "k", duration: 1 })).toEqual({
      moved: false,
      found: "processing",
    });
    expect(await jobStates.fail(db, job.id, 1, { errorMessage: "x", duration: null })).toEqual({
      moved: false,
      found: "processing",
    });
    expect(await jobStates.heartbeat(db, job.id, 2, { progress: 0.5 })).toMatchObject({ moved: true });
  });

  it("claim: a delivery claims only the stage its message is for; a split job's join starts at its parts' share of progress", async () => {
    const job = await jobIn("queued", { dispatch: 2 });
    await direct.update(jobs).set({ stage: "join" }).where(eq(jobs.id, job.id));
    expect(await jobStates.claim(db, job.id, 2, "whole")).toEqual({ moved: false, found: "queued" });
    const joined = await jobStates.claim(db, job.id, 2, "join");
    expect(joined).toMatchObject({ moved: true, job: { status: "processing", stage: "join", lease: 1 } });
    expect((await reread(job.id)).progress).toBeCloseTo(jobStates.PARTS_SHARE, 5);
    expect(await jobStates.heartbeat(db, job.id, 1, { progress: 0.5 })).toMatchObject({ moved: true });
    expect((await reread(job.id)).progress).toBeCloseTo(jobStates.PARTS_SHARE + (1 - jobStates.PARTS_SHARE) * 0.5, 5);
    // While a job's parts run, no claim of the job's own beats, reports or is taken back by the sweep.
    const splitting = await jobIn("processing", { stale: true });
    await direct.update(jobs).set({ stage: "parts" }).where(eq(jobs.id, splitting.id));
    expect(await jobStates.heartbeat(db, splitting.id, 0, { progress: 0.5 })).toEqual({
      moved: false,
      found: "processing",
    });
    expect(await jobStates.sweepRequeue(db, splitting.id, cutoff())).toEqual({ moved: false, found: "processing" });
  });

  it("a split job that ends, or one an encoder held, is marked for its scratch's deletion in the same statement; a job no encoder held is not", async () => {
    const split = await jobIn("processing");
    await direct
      .update(jobs)
      .set({ stage: "join", split: { parts: [] } as unknown as Job["split"] })
      .where(eq(jobs.id, split.id));
    // Its encoder may be storing pieces that no split has recorded yet.
    const held = await jobIn("processing");
    const waiting = await jobIn("queued");
    for (const job of [split, held, waiting]) await jobStates.cancel(db, { id: job.id, accountId: job.accountId });
    expect((await reread(split.id)).scratchPendingSince).toEqual(expect.any(Date));
    expect((await reread(held.id)).scratchPendingSince).toEqual(expect.any(Date));
    expect((await reread(waiting.id)).scratchPendingSince).toBeNull();
  });

  it("a claim of a quiet job whose interruptions are spent fails it instead, once, with the reason", async () => {
    const job = await jobIn("processing", { stale: true, interruptions: MAX_INTERRUPTIONS, dispatch: 1 });
    expect(await jobStates.claim(db, job.id, 1, "whole")).toEqual({ moved: false, found: "processing" });
    expect(await jobStates.claimInterrupted(db, job.id, 0)).toEqual({ moved: false, found: "processing" });
    const failed = await jobStates.claimInterrupted(db, job.id, 1);
    expect(failed).toMatchObject({
      moved: true,
      job: { status: "failed", errorMessage: jobStates.INTERRUPTED_MESSAGE },
    });
    expect(jobStates.INTERRUPTED_MESSAGE).toMatch(/interrupted 4 times/);
    const beating = await jobIn("processing", { interruptions: MAX_INTERRUPTIONS });
    expect(await jobStates.claimInterrupted(db, beating.id, 0)).toEqual({ moved: false, found: "processing" });
  });

  it("retry: one more attempt at the source and the next dispatch, while attempts remain", async () => {
    const job = await jobIn("processing", { retryCount: JOB_DELIVERY_RETRIES - 1, dispatch: 1, messageId: "msg_1" });
    const retried = await jobStates.retry(db, job.id, 0);
    expect(retried).toMatchObject({
      moved: true,
      job: { status: "queued", retryCount: JOB_DELIVERY_RETRIES, dispatch: 2, messageId: null },
    });
    const spent = await jobIn("processing", { retryCount: JOB_DELIVERY_RETRIES });
    expect(await jobStates.retry(db, spent.id, 0)).toEqual({ moved: false, found: "processing" });
  });

  it("a job the queue refused gives its quota unit back in the same statement, once", async () => {
    const job = await jobIn("queued");
    const units = async () =>
      (await direct.select({ count: usage.count }).from(usage).where(eq(usage.accountId, job.accountId)))[0].count;
    expect(await units()).toBe(1);
    expect((await jobStates.failUnqueued(db, job.id, "refused")).moved).toBe(true);
    expect(await units()).toBe(0);
    expect(await jobStates.failUnqueued(db, job.id, "refused")).toEqual({ moved: false, found: "failed" });
    expect(await units()).toBe(0);
  });

  it("a cancel and a completion racing for one job: exactly one wins, and each sees the state it met", async () => {
    for (let i = 0; i < 10; i++) {
      const job = await jobIn("processing");
      const [cancelled, completed] = await Promise.all([
        jobStates.cancel(db, { id: job.id, accountId: job.accountId }),
        jobStates.complete(db, job.id, 0, {
          outputKey: outputKeyFor(job.accountId, job.id, "output.mp4"),
          duration: 1,
        }),
      ]);
      expect([cancelled.moved, completed.moved].filter(Boolean)).toHaveLength(1);
      const winner = cancelled.moved ? "cancelled" : "completed";
      expect((await reread(job.id)).status).toBe(winner);
      expect(cancelled.moved ? completed : cancelled).toEqual({ moved: false, found: winner });
    }
  });
});

describe("contract §4.2 row 1 and §4.3 rule 1 › creation: the quota unit and the queued job in one statement", () => {
  const newJob = () => ({
    preset: "mp4_264_720p",
    inputUrl: "https://media.example.com/a.mp4",
    clientMetadata: { orderId: 7 },
    edl: null,
    createdAt: new Date(),
  });
  const everyPlan = (limit: number) =>
    Object.fromEntries(PLAN_IDS.map((plan) => [plan, limit])) as Record<PlanId, number>;
  const callerOf = (account: { id: string; plan: PlanId }): Caller => ({
    keyId: randomUUID(),
    accountId: account.id,
    plan: account.plan,
    webhookUrl: null,
  });
  const create = (accountId: string, limit: number) =>
    jobStates.create(db, { caller: callerOf({ id: accountId, plan: "free" }) }, newJob(), {
      period: PERIOD,
      limits: everyPlan(limit),
      plans: PLAN_IDS,
    });

  it("inserts a queued job holding this month's unit, with what was sent", async () => {
    const account = await newAccount();
    const created = await create(account.id, 10);
    expect(created).toEqual({
      outcome: "created",
      caller: expect.objectContaining({ accountId: account.id }),
      jobId: expect.any(String),
      used: 1,
    });
    const job = await reread((created as { jobId: string }).jobId);
    expect(job).toMatchObject({
      status: "queued",
      accountId: account.id,
      quotaPeriod: PERIOD,
      clientMetadata: { orderId: 7 },
      edl: null,
    });
  });

  it("refuses at the limit without inserting, and tells the exact count, also above a lowered limit", async () => {
    const account = await newAccount();
    await direct.insert(usage).values({ accountId: account.id, period: PERIOD, count: 12 });
    expect(await create(account.id, 10)).toMatchObject({ outcome: "quotaUsedUp", used: 12 });
    expect(await create(account.id, 0)).toMatchObject({ outcome: "quotaUsedUp", used: 12 });
    const fresh = await newAccount();
    expect(await create(fresh.id, 0)).toMatchObject({ outcome: "quotaUsedUp", used: 0 });
    const [{ n }] = await direct
      .select({ n: sql<number>`count(*)::int` })
      .from(jobs)
      .where(sql`${jobs.accountId} in (${account.id}, ${fresh.id})`);
    expect(n).toBe(0);
  });

  it("200 at once against 150 remaining units: exactly 150 jobs, every refusal told the full count", async () => {
    const account = await newAccount();
    await direct.insert(usage).values({ accountId: account.id, period: PERIOD, count: 850 });
    const results = await Promise.all(Array.from({ length: 200 }, () => create(account.id, 1000)));
    const created = results.flatMap((r) => (r.outcome === "created" ? [r] : []));
    expect(created).toHaveLength(150);
    expect(created.map((r) => r.used).sort((a, b) => a - b)).toEqual(Array.from({ length: 150 }, (_, i) => 851 + i));
    expect(results.filter((r) => r.outcome !== "created")).toEqual(
      Array.from({ length: 50 }, () => expect.objectContaining({ outcome: "quotaUsedUp", used: 1000 })),
    );
    const [{ n }] = await direct
      .select({ n: sql<number>`count(*)::int` })
      .from(jobs)
      .where(eq(jobs.accountId, account.id));
    expect(n).toBe(150);
  });

  describe("the creator given by its API key, checked by the same statement", () => {
    const LIMITS: Record<PlanId, number> = { free: 2, pro: 5, business: 7, enterprise: 9 };
    const jobsOf = async (accountId: string) =>
      (await direct.select({ n: sql<number>`count(*)::int` }).from(jobs).where(eq(jobs.accountId, accountId)))[0].n;
    const unitsOf = async (accountId: string) =>
      (await direct.select({ count: usage.count }).from(usage).where(eq(usage.accountId, accountId)))[0]?.count ?? 0;
    async function keyed(plan: PlanId, options: { revoked?: boolean; webhookUrl?: string } = {}) {
      const [account] = await direct
        .insert(accounts)
        .values({ plan, webhookUrl: options.webhookUrl ?? null })
        .returning();
      const keyHash = randomUUID();
      const [key] = await direct
        .insert(apiKeys)
        .values({ accountId: account.id, hash: keyHash, last4: "abcd", revokedAt: options.revoked ? new Date() : null })
        .returning();
      return { account, key, keyHash };
    }
    const createBy = (keyHash: string, plans: readonly PlanId[] = PLAN_IDS) =>
      jobStates.create(db, { keyHash }, newJob(), { period: PERIOD, limits: LIMITS, plans });

    it("creates with the key's account, and answers with its caller and the limit of its plan", async () => {
      const { account, key, keyHash } = await keyed("pro", { webhookUrl: "https://hooks.example.com/v" });
      const created = await createBy(keyHash);
      expect(created).toEqual({
        outcome: "created",
        caller: { keyId: key.id, accountId: account.id, plan: "pro", webhookUrl: "https://hooks.example.com/v" },
        jobId: expect.any(String),
        used: 1,
      });
      expect(await reread((created as { jobId: string }).jobId)).toMatchObject({
        status: "queued",
        accountId: account.id,
        quotaPeriod: PERIOD,
      });
      for (let i = 0; i < 6; i++) await createBy(keyHash);
      expect(await jobsOf(account.id)).toBe(LIMITS.pro);
      expect(await createBy(keyHash)).toMatchObject({
        outcome: "quotaUsedUp",
        caller: { plan: "pro" },
        used: LIMITS.pro,
      });
    });

    it("an unknown key and a revoked key create nothing and take no unit", async () => {
      expect(await createBy(randomUUID())).toEqual({ outcome: "unknownKey" });
      const { account, keyHash } = await keyed("enterprise", { revoked: true });
      expect(await createBy(keyHash)).toEqual({ outcome: "unknownKey" });
      expect([await jobsOf(account.id), await unitsOf(account.id)]).toEqual([0, 0]);
    });

    it("a plan without the preset is refused with its caller, and takes no unit", async () => {
      const { account, keyHash } = await keyed("free");
      expect(await createBy(keyHash, ["pro", "business", "enterprise"])).toMatchObject({
        outcome: "presetNotAllowed",
        caller: { accountId: account.id, plan: "free" },
      });
      expect([await jobsOf(account.id), await unitsOf(account.id)]).toEqual([0, 0]);
      expect(await createBy(keyHash, ["free", "pro", "business", "enterprise"])).toMatchObject({ outcome: "created" });
    });

    it("60 at once against 7 units on business: exactly 7 jobs", async () => {
      const { account, keyHash } = await keyed("business");
      const results = await Promise.all(Array.from({ length: 60 }, () => createBy(keyHash)));
      expect(results.filter((r) => r.outcome === "created")).toHaveLength(LIMITS.business);
      expect(results.filter((r) => r.outcome === "quotaUsedUp")).toHaveLength(60 - LIMITS.business);
      expect([await jobsOf(account.id), await unitsOf(account.id)]).toEqual([LIMITS.business, LIMITS.business]);
    });
  });
});
