import { chmod, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startNeonHttp } from "./neon-http";
import { lockDataDir } from "./data-dir-lock";
import { startEmbeddedPostgres } from "./embedded-postgres";
import { startNeonWsProxy } from "./neon-ws-proxy";
import { startQStashEmulator } from "./qstash-emulator";
import { startRedisRest } from "./redis-rest";
import { startS3Server } from "./s3-server";

export interface LocalCloudOptions {
  /**
   * Keep the database (`postgres/`) and S3 objects (`s3/`) here, for this process alone: a
   * second taker gets DataDirInUse. A temporary folder otherwise.
   */
  dataDir?: string;
  /** What the data directory's lock says about its holder, for whoever finds it taken. */
  owner?: Record<string, unknown>;
  /** Use this Postgres instead of starting the embedded one. */
  databaseUrl?: string;
  /** Back the Upstash REST stand-in with this Redis; in memory otherwise. */
  redisUrl?: string;
  host?: string;
  qstashRetryBaseMs?: number;
  log?: (source: string, line: string) => void;
}

export interface LocalCloud {
  databaseUrl: string;
  /** Where the embedded PostgreSQL keeps its data (as root, perhaps where dataDir/postgres links to); none with databaseUrl. */
  postgresDataDir?: string;
  neonWsProxy: string;
  /** Neon's SQL-over-HTTP endpoint (`neonConfig.fetchEndpoint`), e.g. `http://127.0.0.1:PORT/sql`. */
  neonHttp: string;
  s3: { endpoint: string; region: string; bucket: string; accessKeyId: string; secretAccessKey: string };
  qstash: { url: string; token: string; currentSigningKey: string; nextSigningKey: string };
  redis: { url: string; token: string };
  /**
   * Records the processes started beside the cloud that must not outlive this one (see
   * lockDataDir); nothing to do without a data directory of its own.
   */
  holdProcesses(processes: { pid: number; group: boolean }[]): Promise<void>;
  stop(): Promise<void>;
}

/** What a client of the running cloud may be told: the addresses and credentials, no controls. */
export type LocalCloudInfo = Omit<LocalCloud, "stop" | "holdProcesses">;

/** The managed services, stood in for on this machine (docs/getting-started.md, the local cloud). */
export async function startLocalCloud(opts: LocalCloudOptions = {}): Promise<LocalCloud> {
  const host = opts.host ?? "127.0.0.1";
  const dataDir = opts.dataDir ?? (await mkdtemp(join(tmpdir(), "local-cloud-")));
  const temp = opts.dataDir ? undefined : dataDir;
  // As root, PostgreSQL runs as the user postgres, who must be able to reach its directory.
  if (temp) await chmod(temp, 0o755);
  const stops: (() => Promise<void>)[] = [];
  const stop = async () => {
    for (const s of stops.splice(0).reverse()) await s().catch((err) => console.error("local cloud teardown:", err));
    if (temp) await rm(temp, { recursive: true, force: true });
  };
  const lock = temp ? undefined : await lockDataDir(dataDir, opts.owner);
  if (lock) stops.push(lock.release);
  try {
    let databaseUrl = opts.databaseUrl;
    let postgresDataDir: string | undefined;
    if (!databaseUrl) {
      const postgres = await startEmbeddedPostgres({
        host,
        dataDir: join(dataDir, "postgres"),
        log: (line) => opts.log?.("postgres", line),
      });
      // Kept elsewhere (as root, where the user postgres can reach it), a temporary cluster goes with the temporary folder.
      if (temp && postgres.dataDir !== join(temp, "postgres"))
        stops.push(() => rm(postgres.dataDir, { recursive: true, force: true }));
      stops.push(postgres.stop);
      databaseUrl = postgres.databaseUrl;
      postgresDataDir = postgres.dataDir;
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
      postgresDataDir,
      neonWsProxy: proxy.address,
      neonHttp: neonHttp.endpoint,
      s3: {
        endpoint: s3.endpoint,
        region: "auto",
        bucket,
        accessKeyId: s3.accessKeyId,
        secretAccessKey: s3.secretAccessKey,
      },
      qstash: {
        url: qstash.url,
        token: qstash.token,
        currentSigningKey: qstash.currentSigningKey,
        nextSigningKey: qstash.nextSigningKey,
      },
      redis: { url: redis.url, token: redis.token },
      holdProcesses: async (processes) => lock?.hold(processes),
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}
