import { randomBytes } from "node:crypto";
import { startLocalCloud, type LocalCloudInfo } from "./cloud";
import { freePort } from "./cloud/free-port";
import { superviseEncoder } from "./encoder-process";
import { applyMigrations } from "./migrate";
import { startWorkerProcess } from "./worker-process";
import { workerVars } from "./worker-vars";

export type EncoderChoice =
  | { kind: "process"; port?: number; allowLoopbackSources: boolean; workDir?: string; env?: Record<string, string> }
  | { kind: "external"; url: string };

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
  /** The QStash emulator's first retry delay (each later one doubles). */
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
 * (optionally) the encoder process. Used by `npm run dev`, the test suites and the benchmarks
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

    const encoderPort = opts.encoder.kind === "process" ? (opts.encoder.port ?? (await freePort())) : 0;
    const encoderUrl = opts.encoder.kind === "process" ? `http://127.0.0.1:${encoderPort}` : opts.encoder.url;
    const internalSecret = randomBytes(24).toString("hex");
    const { stop: _cloudStop, holdProcesses: _hold, ...cloudInfo } = cloud;
    const workerPort = opts.workerPort ?? (await freePort());
    const apiUrl = `http://127.0.0.1:${workerPort}`;
    const info: StackInfo = { apiUrl, encoderUrl, databaseUrl: cloud.databaseUrl, internalSecret, cloud: cloudInfo };
    // What a run that finds this one killed must stop: the process groups of the Worker's server and of the encoder now running.
    const held: Partial<Record<"worker" | "encoder", { pid: number; group: boolean }>> = {};
    const hold = () => cloud.holdProcesses([held.worker, held.encoder].filter((p) => p !== undefined));

    const workerEnv: Record<string, string> = {
      ...workerVars(cloudInfo, { publicUrl: apiUrl, encoderUrl }, internalSecret),
      ...opts.workerEnv,
    };
    // Side by side: neither needs the other up to start (the encoder calls the Worker only for a job).
    const choice = opts.encoder;
    const [workerStart, encoderStart] = await Promise.allSettled([
      startWorkerProcess({
        port: workerPort,
        vars: workerEnv,
        log: (l) => log("worker", l),
        signal: opts.signal,
        watch: opts.watch,
        inspectorPort: opts.workerInspectorPort,
      }),
      choice.kind === "process"
        ? superviseEncoder({
            port: encoderPort,
            env: encoderEnv(info, choice, workerEnv.ENCODER_URL),
            log,
            watch: opts.watch,
            onStart: (pid) => {
              held.encoder = { pid, group: true };
              hold().catch((err) =>
                log("supervisor", `could not record encoder pid ${pid} in the data directory's lock: ${err}`),
              );
            },
          })
        : undefined,
    ]);
    if (workerStart.status === "fulfilled") stops.push(workerStart.value.stop);
    if (encoderStart.status === "fulfilled" && encoderStart.value) stops.push(encoderStart.value.stop);
    if (workerStart.status === "rejected") throw workerStart.reason;
    if (encoderStart.status === "rejected") throw encoderStart.reason;
    const worker = workerStart.value;
    held.worker = { pid: worker.pid, group: true };
    await hold();
    opts.signal?.throwIfAborted();

    const encoder = encoderStart.value;
    if (encoder) {
      return {
        info,
        stop,
        /** Kills the encoder outright (a crash) and resolves once its supervisor has a new one answering. */
        async crashEncoder() {
          const pid = encoder.pid();
          process.kill(pid, "SIGKILL");
          await encoder.readyAfter(pid);
        },
        encoderPid: (): number | undefined => encoder.pid(),
        /** Settles when the Worker's server ends, by stop() or on its own (then nothing serves the API). */
        workerExited: worker.exited,
        /** The encoder's unexpected exits, as its supervisor reported them. */
        encoderCrashes: encoder.crashes,
        /** Resolves once an encoder other than `pid` is answering (the supervisor restarted it). */
        encoderReadyAfter: encoder.readyAfter,
      };
    }
    return {
      info,
      stop,
      crashEncoder: async () => undefined,
      encoderPid: (): number | undefined => undefined,
      workerExited: worker.exited,
      encoderCrashes: () => [],
      encoderReadyAfter: async () => undefined,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}
