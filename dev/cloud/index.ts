import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startNeonHttp } from "./neon-http";
import { startNeonWsProxy } from "./neon-ws-proxy";
import { startPgliteServer } from "./pglite-server";
import { startQStashEmulator } from "./qstash-emulator";
import { startRedisRest } from "./redis-rest";
import { startS3Server } from "./s3-server";

export interface LocalCloudOptions {
  /** Keep PGlite data (and S3 objects) here; a temporary folder otherwise. */
  dataDir?: string;
  /** Use this Postgres instead of starting PGlite. */
  databaseUrl?: string;
  /** Back the Upstash REST stand-in with this Redis; in memory otherwise. */
  redisUrl?: string;
  host?: string;
  qstashRetryBaseMs?: number;
}

export interface LocalCloud {
  databaseUrl: string;
  neonWsProxy: string;
  /** Neon's SQL-over-HTTP endpoint (`neonConfig.fetchEndpoint`), e.g. `http://127.0.0.1:PORT/sql`. */
  neonHttp: string;
  s3: { endpoint: string; region: string; bucket: string; accessKeyId: string; secretAccessKey: string };
  qstash: { url: string; token: string; currentSigningKey: string; nextSigningKey: string };
  redis: { url: string; token: string };
  stop(): Promise<void>;
}

/** The managed services, stood in for on this machine (architecture: Local shape). */
export async function startLocalCloud(opts: LocalCloudOptions = {}): Promise<LocalCloud> {
  const host = opts.host ?? "127.0.0.1";
  const temp = opts.dataDir ? undefined : await mkdtemp(join(tmpdir(), "local-cloud-"));
  const dataDir = opts.dataDir ?? temp!;
  const stops: (() => Promise<void>)[] = [];
  const stop = async () => {
    for (const s of stops.splice(0).reverse()) await s().catch(() => undefined);
    if (temp) await rm(temp, { recursive: true, force: true });
  };
  try {
    let databaseUrl = opts.databaseUrl;
    if (!databaseUrl) {
      const pglite = await startPgliteServer({ host, dataDir: join(dataDir, "pglite") });
      stops.push(pglite.stop);
      databaseUrl = pglite.databaseUrl;
    }
    const proxy = await startNeonWsProxy(host);
    stops.push(proxy.stop);
    const neonHttp = await startNeonHttp({ host, databaseUrl });
    stops.push(neonHttp.stop);
    const bucket = "outputs";
    const s3 = await startS3Server({ host, directory: join(dataDir, "s3"), bucket });
    stops.push(s3.stop);
    const qstash = await startQStashEmulator({ host, retryBaseMs: opts.qstashRetryBaseMs });
    stops.push(qstash.stop);
    const redis = await startRedisRest({ host, redisUrl: opts.redisUrl });
    stops.push(redis.stop);
    return {
      databaseUrl,
      neonWsProxy: proxy.address,
      neonHttp: neonHttp.endpoint,
      s3: { endpoint: s3.endpoint, region: "auto", bucket, accessKeyId: s3.accessKeyId, secretAccessKey: s3.secretAccessKey },
      qstash: { url: qstash.url, token: qstash.token, currentSigningKey: qstash.currentSigningKey, nextSigningKey: qstash.nextSigningKey },
      redis: { url: redis.url, token: redis.token },
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}
