import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openAdmin } from "../../dev/admin/commands";
import type { PlanId } from "../../domain/plans";
import { startStack } from "../../dev/stack";
import { vi } from "vitest";
import { TERMINAL_STATUSES, type Job } from "../../client";
import { type ApiClient, bodyOf, createApiClient } from "../support/api-client";
import { stackLog, startTestStack, TEST_REDIS_URL } from "../support/stack";

/** The suites' API client as one account's key. */
export type Client = ApiClient & { key: string; accountId: string };

/**
 * The whole service with the real encoder process, for one test file: the Worker in workerd,
 * the local cloud on a scratch database, and the encoder beside them.
 */
export async function startE2E(opts: {
  allowLoopbackSources: boolean;
  env?: Record<string, string>;
  log?: (source: string, line: string) => void;
  /** A database of the caller's (migrated here); a scratch database of the machine's PostgreSQL otherwise. */
  databaseUrl?: string;
  /** Worker bindings overriding the local cloud's (see StackOptions.workerEnv). */
  workerEnv?: Record<string, string>;
  /** The QStash emulator's first retry delay; 3 s unless a test needs messages to run out sooner. */
  qstashRetryBaseMs?: number;
  /** Encoder processes behind the local Fly.io proxy; 1 unless given. */
  encoders?: number;
  /** Each encoder held to its CPU list (see EncoderChoice.cpus). */
  cpus?: readonly string[];
}) {
  const workDir = await mkdtemp(join(tmpdir(), "encoder-work-"));
  const encoder = {
    kind: "process",
    count: opts.encoders,
    allowLoopbackSources: opts.allowLoopbackSources,
    workDir,
    // The suites' stacks share the cores with the test runs: an encoder holding only a stream's
    // later parts at its session's niceness would wait on them (encoder/ffmpeg/priority.ts).
    env: { SESSION_NICENESS: "false", ...opts.env },
    cpus: opts.cpus,
  } as const;
  // Redeliveries 3 s and 6 s after a failure (real QStash waits longer still): a crashed encoder
  // restarting on a loaded machine is listening again before QStash gives up on its message.
  const qstashRetryBaseMs = opts.qstashRetryBaseMs ?? 3000;
  const stack = opts.databaseUrl
    ? await startStack({
        encoder,
        qstashRetryBaseMs,
        log: stackLog(opts.log),
        databaseUrl: opts.databaseUrl,
        redisUrl: TEST_REDIS_URL,
        workerEnv: opts.workerEnv,
      })
    : await startTestStack(encoder, { qstashRetryBaseMs, log: opts.log, workerEnv: opts.workerEnv });
  const admin = openAdmin({ databaseUrl: stack.info.databaseUrl, redis: stack.info.cloud.redis });
  const api = stack.info.apiUrl;

  async function client(plan: PlanId = "enterprise"): Promise<Client> {
    const { accountId, apiKey } = await admin.createAccount(plan);
    return Object.assign(createApiClient({ baseUrl: api, apiKey }), { key: apiKey, accountId });
  }

  /** Reads the job every 250 ms until `until` says stop (default: a terminal status), and returns that read. */
  async function waitFor(
    c: Client,
    jobId: string,
    until = (job: Job) => TERMINAL_STATUSES.includes(job.status),
    timeoutMs = 180_000,
  ): Promise<Job> {
    return vi.waitFor(
      async () => {
        const job = bodyOf(await c.getJob(jobId), 200);
        if (!until(job)) throw new Error(`job ${jobId} still ${job.status}`);
        return job;
      },
      { timeout: timeoutMs, interval: 250 },
    );
  }

  return {
    stack,
    admin,
    workDir,
    client,
    waitFor,
    stop: async () => {
      await admin.close();
      await stack.stop();
    },
  };
}

export type E2E = Awaited<ReturnType<typeof startE2E>>;
