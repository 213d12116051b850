import { randomBytes } from "node:crypto";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startLocalCloud, type LocalCloudInfo } from "./cloud";
import { startFlyProxy } from "./cloud/fly-proxy";
import { freePort } from "./cloud/free-port";
import { type SupervisedEncoder, superviseEncoder } from "./encoder-process";
import { applyMigrations } from "./migrate";
import { startWorkerProcess } from "./worker-process";
import { workerVars } from "./worker-vars";

export type EncoderChoice =
  | {
      kind: "process";
      /** The port of the encoders' one address (the local Fly.io proxy's); a free one unless given. */
      port?: number;
      /** Encoder processes behind that address, as Machines behind Fly.io's proxy: 1 unless given. */
      count?: number;
      allowLoopbackSources: boolean;
      /** Where the encoder works; with several, each works in a directory of its own under it, named as the encoder. */
      workDir?: string;
      env?: Record<string, string>;
      /**
       * One CPU list per encoder (taskset's, "0" or "0-1"), each encoder and the FFmpeg it runs
       * held to its own: bench/split.ts measures a pool of one-core encoders so. Every core unless given.
       */
      cpus?: readonly string[];
    }
  | { kind: "external"; url: string };

/** One encoder process of the stack, and what a test does to it. */
interface StackEncoder {
  /** Its ENCODER_NAME: encoder-1, encoder-2, … */
  name: string;
  /** The pid of its process running now. */
  pid(): number;
  /** Its unexpected exits, as its supervisor reported them. */
  crashes(): ReturnType<SupervisedEncoder["crashes"]>;
  /** Resolves once a process of it other than `pid` is answering (the supervisor restarted it). */
  readyAfter(pid: number, timeoutMs?: number): Promise<void>;
  /** Stops it for good, as `fly machine stop` stops a Machine: the proxy passes over it from then on. */
  stop(): Promise<void>;
}

export interface StackOptions {
  /** Any Postgres; the embedded PostgreSQL (under dataDir) when absent. */
  databaseUrl?: string;
  /** Taken for this stack alone (see startLocalCloud); `owner` is what its lock says about us. */
  dataDir?: string;
  owner?: Record<string, unknown>;
  redisUrl?: string;
  workerPort?: number;
  encoder: EncoderChoice;
  log?: (source: string, line: string) => void;
  /**
   * The first retry delay of every QStash message, each later one doubling: the emulator's
   * back-off, and the Worker's DISPATCH_RETRY_DELAY for its encoders' messages. Absent, the
   * Worker's dispatches wait what they would in production.
   */
  qstashRetryBaseMs?: number;
  /** Bindings of the Worker to use instead of the local cloud's (the fault campaign puts fronts between it and its services). */
  workerEnv?: Record<string, string>;
  /** Abandons the start: whatever had started is stopped and startStack rejects. */
  signal?: AbortSignal;
  /** Reload the Worker, and restart the encoder, when their sources change (`npm run dev`). */
  watch?: boolean;
  /** Open workerd's DevTools inspector on this port (bench/profile-worker.ts). */
  workerInspectorPort?: number;
}

/** Everything a client of the running stack needs to know; serialisable. */
export interface StackInfo {
  apiUrl: string;
  encoderUrl: string;
  databaseUrl: string;
  internalSecret: string;
  cloud: LocalCloudInfo;
}

/** The names the stack gives its encoders, as `npm run dev` shows them. */
export const encoderName = (index: number) => `encoder-${index + 1}`;

/**
 * The encoder's settings in a stack. `publicUrl` is the address the Worker publishes its jobs to
 * (its ENCODER_URL): the encoder's own, or that of whatever a test puts in front of it, which
 * is then what QStash's signatures name.
 */
function encoderEnv(
  info: StackInfo,
  choice: Extract<EncoderChoice, { kind: "process" }>,
  publicUrl: string,
): Record<string, string> {
  const { cloud } = info;
  return {
    API_INTERNAL_URL: info.apiUrl,
    PUBLIC_URL: publicUrl,
    INTERNAL_SECRET: info.internalSecret,
    QSTASH_CURRENT_SIGNING_KEY: cloud.qstash.currentSigningKey,
    QSTASH_NEXT_SIGNING_KEY: cloud.qstash.nextSigningKey,
    S3_ENDPOINT: cloud.s3.endpoint,
    S3_REGION: cloud.s3.region,
    S3_BUCKET: cloud.s3.bucket,
    S3_ACCESS_KEY_ID: cloud.s3.accessKeyId,
    S3_SECRET_ACCESS_KEY: cloud.s3.secretAccessKey,
    ALLOW_LOOPBACK_SOURCES: String(choice.allowLoopbackSources),
    ...(choice.workDir ? { WORK_DIR: choice.workDir } : {}),
    ...choice.env,
  };
}

/**
 * The whole service on this machine: local cloud, migrated database, the Worker in workerd and
 * (optionally) the encoder processes behind the local stand-in for Fly.io's proxy, whose address
 * is the Worker's ENCODER_URL. Used by `npm run dev`, the test suites and the benchmarks
 * alike; `stop()` ends every process it started.
 */
export async function startStack(opts: StackOptions) {
  const log = opts.log ?? (() => undefined);
  const stops: (() => Promise<void>)[] = [];
  const stop = async () => {
    for (const s of stops.splice(0).reverse()) await s().catch((err) => console.error("stack teardown:", err));
  };
  try {
    const cloud = await startLocalCloud({
      databaseUrl: opts.databaseUrl,
      dataDir: opts.dataDir,
      owner: opts.owner,
      redisUrl: opts.redisUrl,
      qstashRetryBaseMs: opts.qstashRetryBaseMs,
      log,
    });
    stops.push(cloud.stop);
    // Between the steps: a stop asked for meanwhile goes no further (each step can take seconds).
    opts.signal?.throwIfAborted();
    await applyMigrations(cloud.databaseUrl);
    opts.signal?.throwIfAborted();

    const pool = opts.encoder.kind === "process" ? opts.encoder : undefined;
    const count = pool ? (pool.count ?? 1) : 0;
    if (!Number.isInteger(count) || (pool && count < 1))
      throw new Error(`an encoder count must be a whole number from 1; it was ${count}`);
    if (pool?.cpus && pool.cpus.length !== count)
      throw new Error(`one CPU list per encoder: ${count} encoders, ${pool.cpus.length} lists`);
    const encoderPorts = await Promise.all(Array.from({ length: count }, () => freePort()));
    let encoderUrl: string;
    if (pool) {
      // As fly.toml's hard_limit follows the encoders' CONCURRENCY (docs/deploying.md#the-encoder-pool).
      const concurrency = Number(pool.env?.CONCURRENCY ?? process.env.CONCURRENCY);
      const hardLimit = Number.isInteger(concurrency) && concurrency > 0 ? concurrency : undefined;
      const proxy = await startFlyProxy({ ports: encoderPorts, port: pool.port, hardLimit });
      stops.push(proxy.stop);
      encoderUrl = proxy.url;
    } else encoderUrl = (opts.encoder as Extract<EncoderChoice, { kind: "external" }>).url;
    const internalSecret = randomBytes(24).toString("hex");
    const { stop: _cloudStop, holdProcesses: _hold, ...cloudInfo } = cloud;
    const workerPort = opts.workerPort ?? (await freePort());
    const apiUrl = `http://127.0.0.1:${workerPort}`;
    const info: StackInfo = { apiUrl, encoderUrl, databaseUrl: cloud.databaseUrl, internalSecret, cloud: cloudInfo };
    // What a run that finds this one killed must stop: the process groups of the Worker's server and of the encoders now running.
    let workerHeld: { pid: number; group: boolean } | undefined;
    const encodersHeld: ({ pid: number; group: boolean } | undefined)[] = [];
    const hold = () =>
      cloud.holdProcesses(
        [workerHeld, ...encodersHeld].filter((p): p is { pid: number; group: boolean } => p !== undefined),
      );

    const workerEnv: Record<string, string> = {
      ...workerVars(cloudInfo, { publicUrl: apiUrl, encoderUrl }, internalSecret),
      ...(opts.qstashRetryBaseMs === undefined
        ? {}
        : { DISPATCH_RETRY_DELAY: `${opts.qstashRetryBaseMs} * pow(2, retried)` }),
      ...opts.workerEnv,
    };
    // Side by side: none needs another up to start (an encoder calls the Worker only for a job).
    const [workerStart, ...encoderStarts] = await Promise.allSettled([
      startWorkerProcess({
        port: workerPort,
        vars: workerEnv,
        log: (l) => log("worker", l),
        signal: opts.signal,
        watch: opts.watch,
        inspectorPort: opts.workerInspectorPort,
      }),
      ...encoderPorts.map((port, index) => {
        const choice = pool as Extract<EncoderChoice, { kind: "process" }>;
        const name = encoderName(index);
        // Each its own: an encoder at start clears its work dir of what a dead one left (encoder/leftovers.ts).
        const workDir = count === 1 ? choice.workDir : join(choice.workDir ?? tmpdir(), name);
        return superviseEncoder({
          port,
          env: {
            ...encoderEnv(info, choice, workerEnv.ENCODER_URL),
            ENCODER_NAME: name,
            ...(workDir ? { WORK_DIR: workDir } : {}),
          },
          log,
          watch: opts.watch,
          cpu: choice.cpus?.[index],
          onStart: (pid) => {
            encodersHeld[index] = { pid, group: true };
            hold().catch((err) =>
              log("supervisor", `could not record ${name}'s pid ${pid} in the data directory's lock: ${err}`),
            );
          },
        });
      }),
    ]);
    if (workerStart.status === "fulfilled") stops.push(workerStart.value.stop);
    for (const start of encoderStarts) if (start.status === "fulfilled") stops.push(start.value.stop);
    if (workerStart.status === "rejected") throw workerStart.reason;
    for (const start of encoderStarts) if (start.status === "rejected") throw start.reason;
    const worker = workerStart.value;
    workerHeld = { pid: worker.pid, group: true };
    await hold();
    opts.signal?.throwIfAborted();

    const encoders: StackEncoder[] = encoderStarts.map((start, index) => {
      const supervised = (start as PromiseFulfilledResult<SupervisedEncoder>).value;
      return {
        name: encoderName(index),
        pid: supervised.pid,
        crashes: supervised.crashes,
        readyAfter: supervised.readyAfter,
        stop: supervised.stop,
      };
    });
    const first = encoders[0];
    return {
      info,
      stop,
      /** Every encoder process, encoder-1 first; none with an external encoder. */
      encoders,
      /** Kills encoder-1 outright (a crash) and resolves once its supervisor has a new one answering. */
      async crashEncoder() {
        if (!first) return;
        const pid = first.pid();
        process.kill(pid, "SIGKILL");
        await first.readyAfter(pid);
      },
      encoderPid: (): number | undefined => first?.pid(),
      /** Settles when the Worker's server ends, by stop() or on its own (then nothing serves the API). */
      workerExited: worker.exited,
      /** encoder-1's unexpected exits, as its supervisor reported them. */
      encoderCrashes: () => first?.crashes() ?? [],
      /** Resolves once an encoder-1 other than `pid` is answering (the supervisor restarted it). */
      encoderReadyAfter: async (pid: number) => first?.readyAfter(pid),
    };
  } catch (err) {
    await stop();
    throw err;
  }
}
