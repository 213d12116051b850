import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { call, stack } from "./harness";

const run = promisify(execFile);

/**
 * Runs `npm run -s admin -- …` as an operator would; stdout must be exactly one JSON document
 * (-s keeps npm's own "> admin" banner off stdout).
 */
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

  it("a bad invocation exits non-zero with a plain reason on stderr and nothing on stdout", async () => {
    const { accountId } = await admin("account", "create", "--plan", "free");
    const cases: [string[], RegExp][] = [
      [["account", "create", "--plan", "platinum"], /plan must be one of/],
      [["key", "create", "not-a-uuid"], /^No account not-a-uuid$/m],
      [["key", "create", "00000000-0000-4000-8000-000000000000"], /^No account 00000000-0000-4000-8000-000000000000$/m],
      [["key", "revoke", "not-a-key"], /^No active key matches$/m],
      [["webhook", "set", accountId, "ftp://hooks.example.com/x"], /absolute http\(s\) URL/],
      [["account", "plan", "nope", "pro"], /^No account nope$/m],
    ];
    for (const [args, reason] of cases) {
      const err = await admin(...args).catch((e) => e);
      expect(err.code, args.join(" ")).toBe(1);
      expect(err.stdout, args.join(" ")).toBe("");
      expect(err.stderr, args.join(" ")).toMatch(reason);
    }
  });

  it("webhook set drops the cached key lookups, so the next creation echoes the new URL", async () => {
    const { accountId, apiKey } = await admin("account", "create", "--plan", "free");
    const before = await call("POST", "/jobs", { key: apiKey, body: { inputUrl: "https://media.example.com/a.mp4", preset: "mp4_264_720p" } });
    expect(before.body.webhookUrl).toBeNull();
    await admin("webhook", "set", accountId, "https://hooks.example.com/new");
    const after = await call("POST", "/jobs", { key: apiKey, body: { inputUrl: "https://media.example.com/a.mp4", preset: "mp4_264_720p" } });
    expect(after.body.webhookUrl).toBe("https://hooks.example.com/new");
  });
});
