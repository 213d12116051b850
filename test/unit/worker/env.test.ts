import { readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import type { LocalCloudInfo } from "../../../dev/cloud";
import { workerVars } from "../../../dev/worker-vars";
import { DEFAULT_MONTHLY_QUOTA } from "../../../domain/plans";
import { parseRetryDelay } from "../../../domain/retry-delay";
import { monthlyQuotas, parseEnv } from "../../../worker/env";
import { WORKER_BINDINGS } from "../../support/worker-bindings";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../../..");

const env = WORKER_BINDINGS;

describe("the Worker's configuration: QUOTA_LIMITS", () => {
  it("overrides the plans it names and keeps the others' defaults", () => {
    const quotas = monthlyQuotas(parseEnv({ ...env, QUOTA_LIMITS: '{"pro":5000,"free":0}' }));
    expect(quotas).toEqual({ ...DEFAULT_MONTHLY_QUOTA, pro: 5000, free: 0 });
    expect(monthlyQuotas(parseEnv(env))).toEqual(DEFAULT_MONTHLY_QUOTA);
  });

  // Refused at the start: a bad value that passed it would turn every POST /jobs, POST /edl and usage page into a 500.
  it.each(["{pro:5000}", '{"pro":"5000"}', '{"Pro":5}', '{"pro":-1}', '{"pro":1.5}', "[5000]", "null", ""])(
    "refuses %j at the start, naming it",
    (value) => {
      expect(() => parseEnv({ ...env, QUOTA_LIMITS: value })).toThrow(
        "Worker configuration is invalid or missing: QUOTA_LIMITS",
      );
    },
  );
});

describe("the Worker's configuration: PART_PARALLELISM and the pool", () => {
  it("is unset unless given (the pool, or the default, decides), takes the pool's size, and refuses what no pool has", () => {
    expect(parseEnv(env).PART_PARALLELISM).toBeUndefined();
    expect(parseEnv({ ...env, PART_PARALLELISM: "48" }).PART_PARALLELISM).toBe(48);
    for (const bad of ["0", "-1", "2.5", "many", "1001"])
      expect(() => parseEnv({ ...env, PART_PARALLELISM: bad }), bad).toThrow(/PART_PARALLELISM/);
  });

  it("takes FLY_APP with FLY_API_TOKEN, or neither, and Fly's own Machines API unless told another", () => {
    expect(parseEnv({ ...env, FLY_APP: "video-encoder", FLY_API_TOKEN: "fm2_x" })).toMatchObject({
      FLY_APP: "video-encoder",
      FLY_API_URL: "https://api.machines.dev",
    });
    expect(() => parseEnv({ ...env, FLY_APP: "video-encoder" })).toThrow(
      "Worker configuration is invalid or missing: FLY_API_TOKEN",
    );
    expect(() => parseEnv({ ...env, FLY_API_TOKEN: "fm2_x" })).toThrow(
      "Worker configuration is invalid or missing: FLY_APP",
    );
    expect(() => parseEnv({ ...env, FLY_APP: "a", FLY_API_TOKEN: "t", FLY_API_URL: "machines" })).toThrow(
      /FLY_API_URL/,
    );
  });
});

describe("the Worker's configuration: DISPATCH_RETRY_DELAY", () => {
  it("redelivers an encoder's message after 2 s, 6 s and 18 s by default, takes QStash's expressions, and refuses others at the start", () => {
    const delays = parseRetryDelay(parseEnv(env).DISPATCH_RETRY_DELAY);
    expect([0, 1, 2].map(delays)).toEqual([2000, 6000, 18_000]);
    expect(parseEnv({ ...env, DISPATCH_RETRY_DELAY: "min(8000, 1000 * pow(2, retried))" }).DISPATCH_RETRY_DELAY).toBe(
      "min(8000, 1000 * pow(2, retried))",
    );
    for (const bad of ["", "2s", "1000 * attempts", "pow(2)"])
      expect(() => parseEnv({ ...env, DISPATCH_RETRY_DELAY: bad }), bad).toThrow(/DISPATCH_RETRY_DELAY/);
  });
});

describe("the Worker's configuration: ALLOW_LOOPBACK_WEBHOOKS", () => {
  it("is off unless set to true: wrangler.toml's vars keep it off, the local stacks' bindings turn it on", () => {
    expect(parseEnv(env).ALLOW_LOOPBACK_WEBHOOKS).toBe(false);
    expect(parseEnv({ ...env, ALLOW_LOOPBACK_WEBHOOKS: "false" }).ALLOW_LOOPBACK_WEBHOOKS).toBe(false);
    expect(parseEnv({ ...env, ALLOW_LOOPBACK_WEBHOOKS: "true" }).ALLOW_LOOPBACK_WEBHOOKS).toBe(true);
    for (const bad of ["1", "yes", "TRUE", ""])
      expect(() => parseEnv({ ...env, ALLOW_LOOPBACK_WEBHOOKS: bad }), bad).toThrow(/ALLOW_LOOPBACK_WEBHOOKS/);

    const toml = readFileSync(join(ROOT, "wrangler.toml"), "utf8");
    const vars = /^\[vars\]\n([\s\S]*?)(?=^\[)/m.exec(toml)?.[1] ?? "";
    expect(vars).toMatch(/^ALLOW_LOOPBACK_WEBHOOKS = "false"$/m);
    const local = workerVars(
      { s3: {}, qstash: {}, redis: {} } as unknown as LocalCloudInfo,
      { publicUrl: "http://127.0.0.1:1", encoderUrl: "http://127.0.0.1:2" },
      "x".repeat(16),
    );
    expect(local.ALLOW_LOOPBACK_WEBHOOKS).toBe("true");
  });
});
