import { describe, expect, it } from "vitest";
import { generateApiKey } from "../../domain/keys";
import { bodyOf, expectError, expectStatus } from "../support/api-client";
import { admin, api, createJob, newAccount, readJob, SOURCE } from "./harness";

const UNAUTHORIZED = {
  error: "Unauthorized",
  message: expect.stringContaining("Bearer spk_xxx or Bearer sk_xxx"),
};

/** Every authenticated route; GET /presets is covered separately (a key is optional there). */
const ROUTES: [string, string][] = [
  ["POST", "/jobs"],
  ["GET", "/jobs"],
  ["GET", "/jobs/00000000-0000-4000-8000-000000000000"],
  ["DELETE", "/jobs/00000000-0000-4000-8000-000000000000"],
  ["GET", "/jobs/00000000-0000-4000-8000-000000000000/download-url"],
  ["POST", "/edl"],
  ["PUT", "/edl"],
];

describe("contract §6 Authentication, rule 4 › five failures, one 401 body, on every route", async () => {
  const { apiKey, accountId } = await newAccount();
  const revoked = await admin.createKey(accountId);
  await admin.revokeKey(revoked.apiKey);

  const cases: [string, Record<string, string>][] = [
    ["missing header", {}],
    ["malformed header", { Authorization: `Token ${apiKey}` }],
    ["unrecognised prefix", { Authorization: `Bearer pk_${apiKey.slice(4)}` }],
    ["unknown key", { Authorization: `Bearer ${generateApiKey()}` }],
    ["revoked key", { Authorization: `Bearer ${revoked.apiKey}` }],
  ];
  for (const [method, path] of ROUTES) {
    for (const [name, headers] of cases) {
      it(`${method} ${path}: ${name} → 401`, async () => {
        const res = await api().raw({ method, path, headers, json: method === "GET" ? undefined : {} });
        expectStatus(res, 401);
        expect(res.body).toEqual(UNAUTHORIZED);
      });
    }
  }
});

describe("contract §6 Authentication, rule 4 › POST /jobs checks the key in its creation statement, and a 401 still comes first", async () => {
  const { apiKey, accountId } = await newAccount();
  const revoked = await admin.createKey(accountId);
  await admin.revokeKey(revoked.apiKey);
  const owner = await newAccount();

  const keys: [string, string][] = [
    ["unknown key", generateApiKey()],
    ["revoked key", revoked.apiKey],
  ];
  const bodies: [string, unknown][] = [
    ["a valid body", { inputUrl: SOURCE, preset: "mp4_264_720p" }],
    ["a preset above the plan", { inputUrl: SOURCE, preset: "hls_abr_264_standard" }],
    ["an unknown preset", { inputUrl: SOURCE, preset: "no_such_preset" }],
    ["a body that does not validate", { inputUrl: "not a url" }],
  ];
  for (const [keyName, key] of keys) {
    for (const [bodyName, json] of bodies) {
      for (const idempotencyKey of [undefined, "retry-1"]) {
        it(`${keyName}, ${bodyName}${idempotencyKey ? ", with an Idempotency-Key" : ""} → 401, nothing created`, async () => {
          const headers: Record<string, string> = { Authorization: `Bearer ${key}` };
          if (idempotencyKey) headers["Idempotency-Key"] = idempotencyKey;
          const res = await api().raw({ method: "POST", path: "/jobs", headers, json });
          expectStatus(res, 401);
          expect(res.body).toEqual(UNAUTHORIZED);
        });
      }
    }
  }

  it("a valid key's refusals keep their own answers (400, 403 with the plan) and take no unit; nothing was created by the refused keys", async () => {
    expectError(
      await api(owner.apiKey).createJob({ inputUrl: SOURCE, preset: "no_such_preset" } as never),
      400,
      "Invalid preset",
    );
    const above = await api(owner.apiKey).createJob({ inputUrl: SOURCE, preset: "hls_abr_264_standard" });
    expectStatus(above, 403);
    expect(above.body).toMatchObject({ yourPlan: "free" });
    const created = await api(owner.apiKey).createJob({ inputUrl: SOURCE, preset: "mp4_264_720p" });
    expectStatus(created, 201);
    expect(created.body).toMatchObject({ status: "queued", user: { remainingJobs: 9 } });
    const theirs = await api(apiKey).createJob({ inputUrl: SOURCE, preset: "mp4_264_720p" });
    expect(theirs.body).toMatchObject({ user: { remainingJobs: 9 } });
    expect(bodyOf(await api(apiKey).listJobs(), 200).pagination.totalCount).toBe(1);
  });
});

describe("contract §6 Authentication, rules 2 and 5", () => {
  it("legacy sk_ keys keep working beside spk_ keys", async () => {
    const { accountId } = await newAccount();
    const legacy = await admin.createKey(accountId, true);
    expect(legacy.apiKey).toMatch(/^sk_/);
    const res = await api(legacy.apiKey).listJobs();
    expectStatus(res, 200);
  });

  it("a key revoked after use is refused at once (its cached lookup is marked changed)", async () => {
    const { accountId } = await newAccount();
    const key = await admin.createKey(accountId);
    const job = await createJob(key.apiKey);
    expect((await api(key.apiKey).listJobs()).status).toBe(200);
    expect((await api(key.apiKey).getJob(job.id)).status).toBe(200);
    // Routes that find the caller through the key cache: these two lookups put it there.
    expect((await api(key.apiKey).listPresets()).status).toBe(200);
    expect((await api(key.apiKey).listPresets()).status).toBe(200);
    await admin.revokeKey(key.keyId);
    expectError(await api(key.apiKey).listPresets(), 401, "Unauthorized");
    expectError(await api(key.apiKey).cancelJob(job.id), 401, "Unauthorized");
    expect((await api(key.apiKey).listJobs()).status).toBe(401);
    // Reads check the key in their own query: refused at once too, the job's existence not told.
    expectError(await api(key.apiKey).listJobs({ page: 3 }), 401, "Unauthorized");
    expectError(await api(key.apiKey).getJob(job.id), 401, "Unauthorized");
    expectStatus(await api(key.apiKey).getDownloadUrl(job.id), 401);
    expectError(await api(key.apiKey).getJob("not-a-uuid"), 401, "Unauthorized");
  });

  it("another account's job is a 404 to read, cancel and sign", async () => {
    const owner = await newAccount();
    const other = await newAccount();
    const job = await createJob(owner.apiKey);
    const read = await api(other.apiKey).getJob(job.id);
    expectError(read, 404, "Not found");
    const cancel = await api(other.apiKey).cancelJob(job.id);
    expectStatus(cancel, 404);
    const sign = await api(other.apiKey).getDownloadUrl(job.id);
    expectStatus(sign, 404);
    expect(sign.body).toEqual({ message: expect.any(String) });
    const list = await api(other.apiKey).listJobs();
    expectStatus(list, 200);
    expect(list.body.jobs).toEqual([]);
    // The owner still sees it, untouched.
    expect((await readJob(owner.apiKey, job.id)).status).toBe("queued");
  });

  it("a job id that is not a UUID is a 404, not an error", async () => {
    const { apiKey } = await newAccount();
    const res = await api(apiKey).getJob("not-a-uuid");
    expectError(res, 404, "Not found");
  });
});
