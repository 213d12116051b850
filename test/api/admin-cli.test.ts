import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { call, stack } from "./harness";

const run = promisify(execFile);

/** Runs `npm run admin -- …` as an operator would; stdout must be exactly one JSON document. */
async function admin(...args: string[]) {
  const { stdout } = await run("npm", ["run", "--silent", "admin", "--", ...args], {
    env: {
      ...process.env,
      DATABASE_URL: stack.databaseUrl,
      UPSTASH_REDIS_REST_URL: stack.cloud.redis.url,
      UPSTASH_REDIS_REST_TOKEN: stack.cloud.redis.token,
    },
  });
  return JSON.parse(stdout.trim());
}

describe("operability: npm run admin", () => {
  it("account create prints {accountId, apiKey}; the key works at once with the plan asked for", async () => {
    const out = await admin("account", "create", "--plan", "business");
    expect(Object.keys(out).sort()).toEqual(["accountId", "apiKey"]);
    expect(out.apiKey).toMatch(/^spk_/);
    const presets = await call("GET", "/presets", { key: out.apiKey });
    expect(presets.body.meta.userPlan).toBe("business");
  });

  it("key create (and --legacy), key revoke by key or id, webhook set", async () => {
    const { accountId } = await admin("account", "create", "--plan", "free");
    const modern = await admin("key", "create", accountId);
    expect(Object.keys(modern).sort()).toEqual(["apiKey", "keyId"]);
    const legacy = await admin("key", "create", accountId, "--legacy");
    expect(legacy.apiKey).toMatch(/^sk_/);
    expect((await call("GET", "/jobs", { key: legacy.apiKey })).status).toBe(200);
    await admin("key", "revoke", legacy.apiKey);
    expect((await call("GET", "/jobs", { key: legacy.apiKey })).status).toBe(401);
    await admin("key", "revoke", modern.keyId);
    expect((await call("GET", "/jobs", { key: modern.apiKey })).status).toBe(401);
    const hook = await admin("webhook", "set", accountId, "https://hooks.example.com/x");
    expect(hook).toEqual({ webhookUrl: "https://hooks.example.com/x", secret: expect.stringMatching(/^whsec_/) });
  });

  it("a bad invocation exits non-zero with usage on stderr and nothing on stdout", async () => {
    const err = await admin("account", "create", "--plan", "platinum").catch((e) => e);
    expect(err.code).toBe(1);
    expect(err.stdout).toBe("");
    expect(err.stderr).toMatch(/plan must be one of/);
  });
});
