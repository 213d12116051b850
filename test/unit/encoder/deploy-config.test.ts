import { readFileSync } from "node:fs";
import { join } from "node:path";
import { parse } from "smol-toml";
import { describe, expect, it } from "vitest";
import { encoderConfigSchema } from "../../../encoder/config";
import { PROJECT_ROOT } from "../../../dev/state";

/** encoder/fly.toml's settings that must agree with each other and with the encoder's own. */
const fly = parse(readFileSync(join(PROJECT_ROOT, "encoder/fly.toml"), "utf8")) as {
  app: string;
  kill_timeout: number;
  env: Record<string, string>;
  mounts: { destination: string }[];
  http_service: { internal_port: number; concurrency: { hard_limit: number } };
};
const secrets = {
  API_INTERNAL_URL: "https://api.example.com",
  INTERNAL_SECRET: "a-secret-of-sixteen-or-more",
  QSTASH_CURRENT_SIGNING_KEY: "current",
  QSTASH_NEXT_SIGNING_KEY: "next",
  S3_ENDPOINT: "https://account.r2.cloudflarestorage.com",
  S3_BUCKET: "outputs",
  S3_ACCESS_KEY_ID: "id",
  S3_SECRET_ACCESS_KEY: "secret",
};

describe("encoder/fly.toml", () => {
  const config = encoderConfigSchema.parse({ ...fly.env, ...secrets });

  it("lets running encodes finish before Fly's kill_timeout ends the machine", () => {
    expect(config.SHUTDOWN_GRACE_MS).toBeGreaterThan(0);
    expect(config.SHUTDOWN_GRACE_MS).toBeLessThan(fly.kill_timeout * 1000);
  });

  it("puts the work dir on the mounted volume, not the root file system", () => {
    expect(fly.mounts).toHaveLength(1);
    expect(config.WORK_DIR.startsWith(`${fly.mounts[0].destination}/`)).toBe(true);
  });

  it("names the app's own public address as the URL QStash delivers to, which a delivery's signature must name", () => {
    expect(new URL(config.PUBLIC_URL).origin).toBe(`https://${fly.app}.fly.dev`);
  });

  it("serves on the port Fly's proxy sends to, and lets every running delivery through", () => {
    expect(config.PORT).toBe(fly.http_service.internal_port);
    expect(fly.http_service.concurrency.hard_limit).toBeGreaterThanOrEqual(config.CONCURRENCY);
  });
});
