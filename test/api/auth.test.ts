import { describe, expect, it } from "vitest";
import { generateApiKey } from "../../domain/keys";
import { admin, call, createJob, newAccount } from "./harness";

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

describe("spec: Authentication rule 4 › five failures, one 401 body, on every route", async () => {
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
        const res = await call(method, path, { headers, body: method === "GET" ? undefined : {} });
        expect(res.status).toBe(401);
        expect(res.body).toEqual(UNAUTHORIZED);
      });
    }
  }
});

describe("spec: Authentication rules 2 and 5", () => {
  it("legacy sk_ keys keep working beside spk_ keys", async () => {
    const { accountId } = await newAccount();
    const legacy = await admin.createKey(accountId, true);
    expect(legacy.apiKey).toMatch(/^sk_/);
    const res = await call("GET", "/jobs", { key: legacy.apiKey });
    expect(res.status).toBe(200);
  });

  it("a key revoked after use is refused at once (the lookup cache is dropped)", async () => {
    const { accountId } = await newAccount();
    const key = await admin.createKey(accountId);
    expect((await call("GET", "/jobs", { key: key.apiKey })).status).toBe(200);
    await admin.revokeKey(key.keyId);
    expect((await call("GET", "/jobs", { key: key.apiKey })).status).toBe(401);
  });

  it("another account's job is a 404 to read, cancel and sign", async () => {
    const owner = await newAccount();
    const other = await newAccount();
    const job = await createJob(owner.apiKey);
    const read = await call("GET", `/jobs/${job.id}`, { key: other.apiKey });
    expect(read.status).toBe(404);
    expect(read.body.error).toBe("Not found");
    const cancel = await call("DELETE", `/jobs/${job.id}`, { key: other.apiKey });
    expect(cancel.status).toBe(404);
    const sign = await call("GET", `/jobs/${job.id}/download-url`, { key: other.apiKey });
    expect(sign.status).toBe(404);
    expect(sign.body).toEqual({ message: expect.any(String) });
    const list = await call("GET", "/jobs", { key: other.apiKey });
    expect(list.body.jobs).toEqual([]);
    // The owner still sees it, untouched.
    expect((await call("GET", `/jobs/${job.id}`, { key: owner.apiKey })).body.status).toBe("queued");
  });

  it("a job id that is not a UUID is a 404, not an error", async () => {
    const { apiKey } = await newAccount();
    const res = await call("GET", "/jobs/not-a-uuid", { key: apiKey });
    expect(res.status).toBe(404);
    expect(res.body.error).toBe("Not found");
  });
});
