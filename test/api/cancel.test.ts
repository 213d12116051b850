import { describe, expect, it } from "vitest";
import { outputKeyFor } from "../../domain/jobs";
import { expectError, expectStatus } from "../support/api-client";
import { api, completeJob, createJob, internal, ISO_MS, newAccount, readJob } from "./harness";

describe("contract §5.4 DELETE /jobs/{id} › cancel", () => {
  it("a queued job: cancelled successfully, cancelledAt set, the job never starts", async () => {
    const { apiKey } = await newAccount();
    const job = await createJob(apiKey);
    const res = await api(apiKey).cancelJob(job.id);
    expectStatus(res, 200);
    expect(Object.keys(res.body).sort()).toEqual(["cancelledAt", "id", "message", "status"]);
    expect(res.body).toMatchObject({ id: job.id, status: "cancelled" });
    expect(res.body.message).toMatch(/cancelled successfully/i);
    expect(res.body.cancelledAt).toMatch(ISO_MS);
    const claim = await internal(`/jobs/${job.id}/claim`, { dispatch: 0 });
    expectStatus(claim, 409);
    const read = await api(apiKey).getJob(job.id);
    expectStatus(read, 200);
    expect(read.body.status).toBe("cancelled");
    expect(read.body.metadata.startedAt).toBeNull();
    expect(read.body.links.cancel).toBeUndefined();
  });

  it("a processing job: the message says it is processing and will stop shortly; the encoder is told to stop", async () => {
    const { apiKey, accountId } = await newAccount();
    const job = await createJob(apiKey);
    expect((await internal(`/jobs/${job.id}/claim`, { dispatch: 0 })).status).toBe(200);
    const res = await api(apiKey).cancelJob(job.id);
    expectStatus(res, 200);
    expect(res.body.message).toMatch(/processing/i);
    expect(res.body.message).toMatch(/stop shortly/i);
    const heartbeat = await internal(`/jobs/${job.id}/heartbeat`, { claim: 1, progress: 0.5 });
    expectStatus(heartbeat, 409);
    expect(heartbeat.body.status).toBe("cancelled");
    // A finish that races the cancel loses: the job stays cancelled.
    const done = await internal(`/jobs/${job.id}/complete`, {
      claim: 1,
      outputKey: outputKeyFor(accountId, job.id, "output.mp4"),
      duration: 1,
    });
    expectStatus(done, 409);
    expect((await readJob(apiKey, job.id)).status).toBe("cancelled");
  });

  it("racing the encoder's claim, the message always matches what the cancel interrupted", async () => {
    const { apiKey } = await newAccount("pro");
    const jobs = await Promise.all(Array.from({ length: 20 }, () => createJob(apiKey)));
    await Promise.all(
      jobs.map(async (job) => {
        const [claim, cancel] = await Promise.all([
          internal(`/jobs/${job.id}/claim`, { dispatch: 0 }),
          api(apiKey).cancelJob(job.id),
        ]);
        expectStatus(cancel, 200);
        expect(cancel.body.message).toMatch(claim.status === 200 ? /processing/i : /cancelled successfully/i);
      }),
    );
  });

  it("completed, failed and cancelled jobs → 400 Invalid operation, unchanged", async () => {
    const { apiKey, accountId } = await newAccount();
    const completed = await createJob(apiKey);
    await completeJob(completed.id, accountId);
    const failed = await createJob(apiKey);
    await internal(`/jobs/${failed.id}/claim`, { dispatch: 0 });
    await internal(`/jobs/${failed.id}/fail`, {
      claim: 1,
      errorMessage: "DURATION_EXCEEDED: source 700s, plan 600s",
      retryable: false,
    });
    const cancelled = await createJob(apiKey);
    await api(apiKey).cancelJob(cancelled.id);

    for (const [job, status] of [
      [completed, "completed"],
      [failed, "failed"],
      [cancelled, "cancelled"],
    ] as const) {
      const res = await api(apiKey).cancelJob(job.id);
      expectError(res, 400, "Invalid operation", status);
      expect(res.body.message).toContain(status);
      expect((await readJob(apiKey, job.id)).status).toBe(status);
    }
  });

  it("an unknown job → 404", async () => {
    const { apiKey } = await newAccount();
    const res = await api(apiKey).cancelJob("6b1f3c1e-8c1a-4c63-9b8e-1d5a3f1e2c4b");
    expectError(res, 404, "Not found");
  });
});
