import { execFile } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { freePort } from "../../dev/cloud/free-port";
import { expectStatus } from "../support/api-client";
import { DashboardSession } from "./dashboard-session";
import { api, stack } from "./harness";

const run = promisify(execFile);

/**
 * Runs `npm run -s admin -- …` as an operator would; stdout must be exactly one JSON document
 * (-s keeps npm's own "> admin" banner off stdout).
 */
const adminEnv = () => ({
  ...process.env,
  DATABASE_URL: stack.databaseUrl,
  UPSTASH_REDIS_REST_URL: stack.cloud.redis.url,
  UPSTASH_REDIS_REST_TOKEN: stack.cloud.redis.token,
});

async function admin(...args: string[]) {
  const { stdout } = await run("npm", ["run", "--silent", "admin", "--", ...args], { env: adminEnv() });
  return JSON.parse(stdout.trim());
}

describe.concurrent("operability: npm run admin", () => {
  it("account create prints {accountId, apiKey}; the key works at once with the plan asked for", async () => {
    const out = await admin("account", "create", "--plan", "business");
    expect(Object.keys(out).sort()).toEqual(["accountId", "apiKey"]);
    expect(out.apiKey).toMatch(/^spk_/);
    const presets = await api(out.apiKey).listPresets();
    expectStatus(presets, 200);
    expect(presets.body.meta.userPlan).toBe("business");
  });

  it("key create (and --legacy), key revoke by key or id, webhook set", async () => {
    const { accountId } = await admin("account", "create", "--plan", "free");
    const modern = await admin("key", "create", accountId);
    expect(Object.keys(modern).sort()).toEqual(["apiKey", "keyId"]);
    const legacy = await admin("key", "create", accountId, "--legacy");
    expect(legacy.apiKey).toMatch(/^sk_/);
    expect((await api(legacy.apiKey).listJobs()).status).toBe(200);
    await admin("key", "revoke", legacy.apiKey);
    expect((await api(legacy.apiKey).listJobs()).status).toBe(401);
    await admin("key", "revoke", modern.keyId);
    expect((await api(modern.apiKey).listJobs()).status).toBe(401);
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
      [["webhook", "set", accountId, "ftp://hooks.example.com/x"], /absolute http:\/\/ or https:\/\/ URL/],
      [["webhook", "set", accountId, "https://user:pw@hooks.example.com/x"], /must not hold a user name or password/],
      [["account", "plan", "nope", "pro"], /^No account nope$/m],
    ];
    const refusals = await Promise.all(cases.map(([args]) => admin(...args).catch((e) => e)));
    cases.forEach(([args, reason], i) => {
      expect(refusals[i].code, args.join(" ")).toBe(1);
      expect(refusals[i].stdout, args.join(" ")).toBe("");
      expect(refusals[i].stderr, args.join(" ")).toMatch(reason);
    });
  });

  it("webhook set drops the cached key lookups, so the next creation echoes the new URL", async () => {
    const { accountId, apiKey } = await admin("account", "create", "--plan", "free");
    const before = await api(apiKey).createJob({ inputUrl: "https://media.example.com/a.mp4", preset: "mp4_264_720p" });
    expectStatus(before, 201);
    expect(before.body.webhookUrl).toBeNull();
    await admin("webhook", "set", accountId, "https://hooks.example.com/new");
    const after = await api(apiKey).createJob({ inputUrl: "https://media.example.com/a.mp4", preset: "mp4_264_720p" });
    expectStatus(after, 201);
    expect(after.body.webhookUrl).toBe("https://hooks.example.com/new");
  });
});

describe.concurrent("operability: npm run admin, help and read commands", () => {
  it("--help, help and <command> --help print usage on stdout and exit 0, without a database", async () => {
    const overviews = [["--help"], ["help"], []];
    const commandHelps = [
      ["help", "key", "list"],
      ["key", "list", "--help"],
    ];
    const [overviewOuts, commandOuts, unknown] = await Promise.all([
      Promise.all(
        overviews.map((args) =>
          run("npm", ["run", "--silent", "admin", "--", ...args], { env: { ...process.env, DATABASE_URL: "" } }),
        ),
      ),
      Promise.all(commandHelps.map((args) => run("npm", ["run", "--silent", "admin", "--", ...args]))),
      run("npm", ["run", "--silent", "admin", "--", "account", "delete"]).catch((e) => e),
    ]);
    overviews.forEach((args, i) => {
      for (const command of [
        "account list",
        "account show <accountId>",
        "key list <accountId>",
        "user create --email",
        "user password <email>",
      ]) {
        expect(overviewOuts[i].stdout, args.join(" ")).toContain(command);
      }
    });
    for (const { stdout } of commandOuts) {
      expect(stdout).toContain("usage: npm run admin -- key list <accountId>");
      expect(stdout).toContain("last four characters");
    }
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain("Unknown command: account delete");
  });

  it("account list, account show (plan, usage this month, webhook) and key list (last four only)", async () => {
    const { accountId, apiKey } = await admin("account", "create", "--plan", "pro");
    await api(apiKey).createJob({ inputUrl: "https://media.example.com/a.mp4", preset: "mp4_264_720p" });
    const listed = await admin("account", "list");
    expect(listed.find((a: { accountId: string }) => a.accountId === accountId)).toMatchObject({
      plan: "pro",
      activeKeys: 1,
      email: null,
      webhookUrl: null,
    });

    expect(await admin("account", "show", accountId)).toMatchObject({
      plan: "pro",
      usage: { used: 1, limit: 1000 },
      webhook: null,
      keys: { active: 1, revoked: 0 },
    });
    await admin("webhook", "set", accountId, "https://hooks.example.com/show");
    const shown = await admin("account", "show", accountId);
    expect(shown.webhook).toEqual({ url: "https://hooks.example.com/show", secretSet: true });
    expect(JSON.stringify(shown)).not.toContain("whsec_");

    await admin("key", "create", accountId, "--name", "second");
    const keys = await admin("key", "list", accountId);
    expect(keys).toHaveLength(2);
    for (const key of keys)
      expect(Object.keys(key).sort()).toEqual(["createdAt", "keyId", "last4", "name", "revokedAt"]);
    expect(keys.map((k: { name: string | null }) => k.name)).toEqual(["second", null]);
    expect(keys[1].last4).toBe(apiKey.slice(-4));
    expect(JSON.stringify(keys)).not.toContain(apiKey.slice(4, 20));

    const missing = await admin("account", "show", "00000000-0000-4000-8000-000000000000").catch((e) => e);
    expect(missing.stderr).toMatch(/^No account 00000000-0000-4000-8000-000000000000$/m);
  });
});

describe.concurrent("operability: npm run admin, dashboard users", () => {
  it("user create makes an account on the plan with a user who can sign in; the address is unique", async () => {
    const email = `operator-made-${Date.now()}@example.com`;
    const created = await admin(
      "user",
      "create",
      "--email",
      email,
      "--plan",
      "business",
      "--password",
      "chosen by the operator",
    );
    expect(created).toMatchObject({
      email,
      plan: "business",
      accountId: expect.any(String),
      userId: expect.any(String),
    });
    expect((await admin("account", "show", created.accountId)).email).toBe(email);
    expect((await new DashboardSession().signIn(email, "chosen by the operator")).status).toBe(303);

    const again = await admin(
      "user",
      "create",
      "--email",
      email.toUpperCase(),
      "--plan",
      "free",
      "--password",
      "another one",
    ).catch((e) => e);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain("already exists");
    const bad = await admin("user", "create", "--email", "nope", "--plan", "free", "--password", "long enough").catch(
      (e) => e,
    );
    expect(bad.stderr).toContain("email: Enter a valid email address.");
  });

  it("user password sets a new one (given, or read from stdin) and signs the user out everywhere", async () => {
    const email = `forgetful-${Date.now()}@example.com`;
    await admin("user", "create", "--email", email, "--plan", "free", "--password", "the first password");
    const session = new DashboardSession();
    await session.signIn(email, "the first password");

    expect(await admin("user", "password", email, "the second password")).toMatchObject({ email, sessionsEnded: 1 });
    expect((await session.get("/dashboard")).status).toBe(303);
    expect((await new DashboardSession().signIn(email, "the first password")).status).toBe(401);

    const piped = run("npm", ["run", "--silent", "admin", "--", "user", "password", email], { env: adminEnv() });
    piped.child.stdin!.end("the third password\n");
    expect(JSON.parse((await piped).stdout)).toMatchObject({ email });
    expect((await new DashboardSession().signIn(email, "the third password")).status).toBe(303);

    const unknown = await admin("user", "password", "nobody@example.com", "whatever123").catch((e) => e);
    expect(unknown.stderr).toMatch(/^No user nobody@example.com$/m);
  });
});

describe("operability: npm run admin when a store is away", () => {
  const adminWith = (env: NodeJS.ProcessEnv, ...args: string[]) =>
    run("npm", ["run", "--silent", "admin", "--", ...args], { env: { ...adminEnv(), ...env } }).then(
      ({ stdout, stderr }) => ({ code: 0, stdout, stderr }),
      (err: { code: number; stdout: string; stderr: string }) => err,
    );

  it("a change whose cache step fails says it stands, prints what was done, and exits 2", async () => {
    const { accountId, apiKey } = await admin("account", "create", "--plan", "free");
    const noRedis = { UPSTASH_REDIS_REST_URL: `http://127.0.0.1:${await freePort()}` };
    const revoked = await adminWith(noRedis, "key", "revoke", apiKey);
    expect(revoked.code).toBe(2);
    expect(JSON.parse(revoked.stdout)).toEqual({ keyId: expect.any(String), revoked: true });
    expect(revoked.stderr).toMatch(
      /^Key \S+ is revoked \(the revocation stands\), but the API's cache of key lookups could not be told \(it expires within 60 s.*\): fetch failed: .*ECONNREFUSED/m,
    );
    expect((await admin("key", "list", accountId))[0].revokedAt).not.toBeNull();

    // A new webhook secret is shown nowhere else: printed though the cache step failed.
    const hook = await adminWith(noRedis, "webhook", "set", accountId, "https://hooks.example.com/away");
    expect(hook.code).toBe(2);
    expect(JSON.parse(hook.stdout)).toEqual({
      webhookUrl: "https://hooks.example.com/away",
      secret: expect.stringMatching(/^whsec_/),
    });
  });

  it("a database it cannot reach is named with the cause, on one line", async () => {
    const away = await adminWith(
      { DATABASE_URL: `postgres://postgres:secret-pw@127.0.0.1:${await freePort()}/postgres` },
      "account",
      "list",
    );
    expect(away.code).toBe(1);
    expect(away.stderr.trim()).toMatch(/^Failed query: select .*: connect ECONNREFUSED 127\.0\.0\.1:\d+$/);
    expect(away.stderr).not.toContain("secret-pw");
  });

  it("a stale npm run dev state (its run killed) is told as such, and never lends its Redis to DATABASE_URL", async () => {
    const dataDir = await mkdtemp(join(tmpdir(), "admin-stale-"));
    try {
      const gone = `http://127.0.0.1:${await freePort()}`;
      await writeFile(
        join(dataDir, "dev-state.json"),
        JSON.stringify({
          databaseUrl: "postgres://x@127.0.0.1:9/none",
          redis: { url: gone, token: "t" },
          apiUrl: gone,
        }),
      );
      await writeFile(join(dataDir, "in-use.json"), JSON.stringify({ pid: 999_999_999, started: "1", about: {} }));
      const stale = await adminWith({ DATA_DIR: dataDir, DATABASE_URL: "" }, "account", "list");
      expect(stale.code).toBe(1);
      expect(stale.stderr.trim()).toMatch(
        /^npm run dev is not running \(its last state is from \d{4}-\d\d-\d\dT[\d:.]+Z\): start it, or set DATABASE_URL\.$/,
      );

      const { apiKey } = await admin("account", "create", "--plan", "free");
      const { UPSTASH_REDIS_REST_URL: _url, UPSTASH_REDIS_REST_TOKEN: _token, ...withoutRedis } = adminEnv();
      const revoked = await run("npm", ["run", "--silent", "admin", "--", "key", "revoke", apiKey], {
        env: { ...withoutRedis, DATA_DIR: dataDir },
      });
      expect(JSON.parse(revoked.stdout)).toEqual({ keyId: expect.any(String), revoked: true });
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  });
});
