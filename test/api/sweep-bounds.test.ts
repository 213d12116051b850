import { and, asc, eq, isNotNull } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { workerVars } from "../../dev/worker-vars";
import { MAX_INTERRUPTIONS } from "../../domain/jobs";
import { accounts, jobs, sessions } from "../../drizzle/schema";
import { createUserWithAccount } from "../../worker/dashboard/lib/users";
import { sweep } from "../../worker/lib/sweep";
import { openServices, type Services } from "../../worker/services";
import { openScratchDatabase } from "../support/http-database";
import { stack } from "./harness";

/**
 * What one sweep (worker/lib/sweep.ts) takes on at most, and what it reports having done, called
 * as the cron calls it, on a database of its own: the shared one holds other files' jobs and
 * sessions, and their sweeps would take some of these meanwhile. The local cloud's QStash and the delivery sink are the shared
 * stack's.
 */
let database: Awaited<ReturnType<typeof openScratchDatabase>>;
let services: Services;

beforeAll(async () => {
  database = await openScratchDatabase("vep_sweep");
  const vars = workerVars(stack.cloud, { publicUrl: stack.apiUrl, encoderUrl: stack.encoderUrl }, stack.internalSecret);
  services = openServices({ ...vars, ...database.bindings });
});

afterAll(() => database?.close());

/** A job row of the account's, as the API would have written it, with `fields` on top. */
const jobRow = <T extends object>(accountId: string, fields: T) => ({
  accountId,
  preset: "mp4_264_720p",
  inputUrl: "https://media.example.com/a.mp4",
  quotaPeriod: "2026-11",
  ...fields,
});

describe("the sweep's backstop for dropped messages", () => {
  it("asks QStash about the 20 longest-waiting queued jobs per sweep; the next sweep takes the rest", async () => {
    const now = new Date();
    const { direct } = database;
    const [account] = await direct.insert(accounts).values({ plan: "enterprise" }).returning();
    // 21 jobs queued 11 to 31 minutes ago, the first the oldest, each on a message QStash never held (as one it dropped).
    await direct.insert(jobs).values(
      Array.from({ length: 21 }, (_, i) =>
        jobRow(account.id, {
          status: "queued" as const,
          messageId: `msg_dropped_${i}`,
          createdAt: new Date(now.getTime() - (31 - i) * 60_000),
        }),
      ),
    );
    const interruptions = async () =>
      (
        await direct
          .select({ interruptions: jobs.interruptions })
          .from(jobs)
          .where(eq(jobs.accountId, account.id))
          .orderBy(asc(jobs.createdAt))
      ).map((j) => j.interruptions);

    const first = await sweep(services, now);
    expect(first.dropped).toEqual({ redispatched: 20, failed: 0 });
    expect(await interruptions()).toEqual([...Array(20).fill(1), 0]);

    // The 20 were dispatched again at `now`, so only the newest still waits on a dropped message.
    const second = await sweep(services, now);
    expect(second.dropped).toEqual({ redispatched: 1, failed: 0 });
    expect(await interruptions()).toEqual(Array(21).fill(1));
  });
});

describe("the sweep's deletion of ended split jobs' scratch", () => {
  it("deletes the scratch of the 100 jobs ended longest ago per sweep; the next sweep takes the rest", async () => {
    const now = new Date();
    const { direct } = database;
    const [account] = await direct.insert(accounts).values({ plan: "enterprise" }).returning();
    // 101 split jobs cancelled 2 to 3.7 minutes ago, the first the oldest, their scratch still pending.
    await direct.insert(jobs).values(
      Array.from({ length: 101 }, (_, i) =>
        jobRow(account.id, {
          status: "cancelled" as const,
          scratchPendingSince: new Date(now.getTime() - (221 - i) * 1000),
        }),
      ),
    );
    /** The marks still set: the jobs whose scratch is still to delete. */
    const pending = async () =>
      (
        await direct
          .select({ since: jobs.scratchPendingSince })
          .from(jobs)
          .where(and(eq(jobs.accountId, account.id), isNotNull(jobs.scratchPendingSince)))
      ).map((j) => j.since?.getTime());

    expect((await sweep(services, now)).scratch).toEqual({ deleted: 100, failed: 0 });
    expect(await pending(), "the job ended last is the one left").toEqual([now.getTime() - 121_000]);
    expect((await sweep(services, now)).scratch).toEqual({ deleted: 1, failed: 0 });
    expect(await pending()).toEqual([]);
  });
});

describe("the sweep's report", () => {
  it("counts what it did: a stale job dispatched again, one failed after its last interruption, an expired session ended", async () => {
    const now = new Date();
    const { direct } = database;
    const [account] = await direct.insert(accounts).values({ plan: "enterprise" }).returning();
    const stale = (interruptions: number) =>
      jobRow(account.id, {
        status: "processing" as const,
        interruptions,
        lastCheckedAt: new Date(now.getTime() - 5 * 60_000),
      });
    await direct.insert(jobs).values([stale(0), stale(MAX_INTERRUPTIONS)]);
    const { userId } = await createUserWithAccount(direct, {
      email: `sweep-report-${now.getTime()}@example.com`,
      password: "long enough pw",
      plan: "free",
    });
    const session = (token: string, expiresAt: Date) => ({
      userId,
      tokenHash: token,
      csrfToken: token,
      expiresAt,
      absoluteExpiresAt: expiresAt,
    });
    const hour = 60 * 60_000;
    await direct
      .insert(sessions)
      .values([session("expired", new Date(now.getTime() - hour)), session("live", new Date(now.getTime() + hour))]);

    expect(await sweep(services, now)).toMatchObject({ redispatched: 1, failed: 1, sessionsEnded: 1 });
    expect(await sweep(services, now)).toMatchObject({ redispatched: 0, failed: 0, sessionsEnded: 0 });
  });
});
