import { eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { jobs } from "../../drizzle/schema";
import { bodyOf, expectStatus } from "../support/api-client";
import { admin, createJob, internal, newAccount, signedInternal } from "./harness";

const row = async (id: string) => (await admin.db.select().from(jobs).where(eq(jobs.id, id)))[0];

/** Two jobs of one account, each claimed once: both on claim 1, so one's report body would fit the other. */
async function twoClaimedJobs() {
  const { apiKey } = await newAccount("pro");
  const [one, other] = [await createJob(apiKey), await createJob(apiKey)];
  for (const job of [one, other]) expectStatus(await internal(`/jobs/${job.id}/claim`, { dispatch: 0 }), 200);
  return { one: one.id, other: other.id };
}

describe("internal API › a signature binds its method and path", () => {
  it("a heartbeat signed for one job is refused (401) on another job's route, another route and another method, and changes nothing; sent as signed, it is taken once", async () => {
    const { one, other } = await twoClaimedJobs();
    const beat = await signedInternal(`/jobs/${one}/heartbeat`, { claim: 1, progress: 0.5 });
    const before = { one: await row(one), other: await row(other) };

    for (const elsewhere of [
      { path: `/jobs/${other}/heartbeat` },
      { path: `/jobs/${one}/fail` },
      { path: `/jobs/${one}/complete` },
      { path: `/jobs/${one}/parts/0/heartbeat` },
      { path: `/jobs/${one}/heartbeat/` },
      { path: "/sweep" },
      { method: "PUT" },
    ]) {
      const refused = await beat(elsewhere);
      expectStatus(refused, 401, JSON.stringify(elsewhere));
      expect(refused.body, JSON.stringify(elsewhere)).toEqual({
        error: "Unauthorized",
        message: "Invalid internal signature",
      });
    }
    expect({ one: await row(one), other: await row(other) }).toEqual(before);

    // The refusals recorded no nonce: the call itself still goes through, once.
    expect(bodyOf(await beat(), 200)).toEqual({ status: "processing" });
    expect((await row(one)).progress).toBe(0.5);
    expect(bodyOf(await beat(), 401)).toEqual({ error: "Unauthorized", message: "Replayed internal signature" });
  });

  it("a failure signed for one job, pointed at another's route, is refused and fails neither", async () => {
    const { one, other } = await twoClaimedJobs();
    const failure = await signedInternal(`/jobs/${one}/fail`, {
      claim: 1,
      errorMessage: "Source refused: not a video",
      retryable: false,
    });
    expect(bodyOf(await failure({ path: `/jobs/${other}/fail` }), 401)).toEqual({
      error: "Unauthorized",
      message: "Invalid internal signature",
    });
    expect((await row(other)).status).toBe("processing");
    expect((await row(one)).status).toBe("processing");
    expect(bodyOf(await failure(), 200)).toEqual({ status: "failed" });
    expect((await row(other)).status).toBe("processing");
  });
});
