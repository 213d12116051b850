import { describe, expect, it } from "vitest";
import { ISO_MS, call, completeJob, createJob, internal, newAccount } from "./harness";

describe("spec: DELETE /jobs/{id} › cancel", () => {
  it("a queued job: cancelled successfully, cancelledAt set, the job never starts", async () => {
    const { apiKey } = await newAccount();
    const job = await createJob(apiKey);
    const res = await call("DELETE", `/jobs/${job.id}`, { key: apiKey });
    expect(res.status).toBe(200);
    expect(Object.keys(res.body).sort()).toEqual(["cancelledAt", "id", "message", "status"]);
    expect(res.body).toMatchObject({ id: job.id, status: "cancelled" });
    expect(res.body.message).toMatch(/cancelled successfully/i);
    expect(res.body.cancelledAt).toMatch(ISO_MS);
    const claim = await internal(`/jobs/${job.id}/claim`, { attempt: 0 });
    expect(claim.status).toBe(409);
    const read = await call("GET", `/jobs/${job.id}`, { key: apiKey });
    expect(read.body.status).toBe("cancelled");
    expect(read.body.metadata.startedAt).toBeNull();
    expect(read.body.links.cancel).toBeUndefined();
  });

  it("a processing job: the message says it is processing and will stop shortly; the encoder is told to stop", async () => {
    const { apiKey } = await newAccount();
    const job = await createJob(apiKey);
    expect((await internal(`/jobs/${job.id}/claim`, { attempt: 0 })).status).toBe(200);
    const res = await call("DELETE", `/jobs/${job.id}`, { key: apiKey });
    expect(res.status).toBe(200);
    expect(res.body.message).toMatch(/processing/i);
    expect(res.body.message).toMatch(/stop shortly/i);
    const heartbeat = await internal(`/jobs/${job.id}/heartbeat`, { progress: 0.5 });
    expect(heartbeat.status).toBe(409);
    expect(heartbeat.body.status).toBe("cancelled");
    // A finish that races the cancel loses: the job stays cancelled.
    const done = await internal(`/jobs/${job.id}/complete`, { outputKey: "outputs/x/y/output.mp4", duration: 1 });
    expect(done.status).toBe(409);
    expect((await call("GET", `/jobs/${job.id}`, { key: apiKey })).body.status).toBe("cancelled");
  });

  it("racing the encoder's claim, the message always matches what the cancel interrupted", async () => {
    const { apiKey } = await newAccount("pro");
    const jobs = await Promise.all(Array.from({ length: 20 }, () => createJob(apiKey)));
    await Promise.all(
      jobs.map(async (job) => {
        const [claim, cancel] = await Promise.all([
          internal(`/jobs/${job.id}/claim`, { attempt: 0 }),
          call("DELETE", `/jobs/${job.id}`, { key: apiKey }),
        ]);
        expect(cancel.status).toBe(200);
        expect(cancel.body.message).toMatch(claim.status === 200 ? /processing/i : /cancelled successfully/i);
      }),
    );
  });

  it("completed, failed and cancelled jobs → 400 Invalid operation, unchanged", async () => {
    const { apiKey, accountId } = await newAccount();
    const completed = await createJob(apiKey);
    await completeJob(completed.id, accountId);
    const failed = await createJob(apiKey);
    await internal(`/jobs/${failed.id}/claim`, { attempt: 0 });
    await internal(`/jobs/${failed.id}/fail`, { errorMessage: "DURATION_EXCEEDED: source 700s, plan 600s", attempt: 0, final: true });
    const cancelled = await createJob(apiKey);
    await call("DELETE", `/jobs/${cancelled.id}`, { key: apiKey });

    for (const [job, status] of [[completed, "completed"], [failed, "failed"], [cancelled, "cancelled"]] as const) {
      const res = await call("DELETE", `/jobs/${job.id}`, { key: apiKey });
      expect(res.status, status).toBe(400);
      expect(res.body.error).toBe("Invalid operation");
      expect(res.body.message).toContain(status);
      expect((await call("GET", `/jobs/${job.id}`, { key: apiKey })).body.status).toBe(status);
    }
  });

  it("an unknown job → 404", async () => {
    const { apiKey } = await newAccount();
    const res = await call("DELETE", "/jobs/6b1f3c1e-8c1a-4c63-9b8e-1d5a3f1e2c4b", { key: apiKey });
    expect(res.status).toBe(404);
    expect(res.body.error).toBe("Not found");
  });
});
