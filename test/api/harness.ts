import { Client } from "@upstash/qstash";
import { afterAll, inject } from "vitest";
import { openAdmin } from "../../dev/admin/commands";
import { readEmulatedMessage } from "../../dev/cloud/qstash-emulator";
import type { CreateJobRequest } from "../../client/types";
import { signInternal } from "../../domain/internal-auth";
import type { PlanId } from "../../domain/plans";
import type { ClaimedJob } from "../../encoder/internal-api";
import { bodyOf, createApiClient } from "../support/api-client";
import type { Delivery } from "./setup/delivery-sink";

export const stack = inject("stack");

export const admin = openAdmin({ databaseUrl: stack.databaseUrl, redis: stack.cloud.redis });
afterAll(() => admin.close());

/** The local cloud's QStash, through the official client. */
export const qstash = new Client({ baseUrl: stack.cloud.qstash.url, token: stack.cloud.qstash.token });

/** A message the local QStash held, whatever became of it. */
export const messageOf = (messageId: string) => readEmulatedMessage(stack.cloud.qstash, messageId);

/** What the delivery sink (where the encoder stands in these suites) has received of one job's messages, oldest first. */
export async function deliveriesOf(jobId: string): Promise<Delivery[]> {
  const all = (await (await fetch(`${stack.encoderUrl}/deliveries`)).json()) as Delivery[];
  return all.filter((d) => JSON.parse(d.body).jobId === jobId);
}

/** The API as the caller with this key (none: no Authorization header). */
export const api = (key?: string) => createApiClient({ baseUrl: stack.apiUrl, apiKey: key });

export async function newAccount(plan: PlanId = "free") {
  return admin.createAccount(plan);
}

/** What the internal API answers, its routes' fields together (it is not in the OpenAPI document). */
export type InternalReply = Partial<{
  job: ClaimedJob;
  /** A part's claim (its lease and attempt, its plan and frames), and a split's or join's parts. */
  claim: number;
  attempt: number;
  plan: unknown;
  part: unknown;
  parts: unknown;
  status: string;
  failed: number;
  sessionsEnded: number;
  error: string;
  message: string;
}>;

/**
 * One call to the Worker's internal API, signed once: each `send` is the same request, as a replay
 * of it would be; `elsewhere` sends it with another method or to another path under /internal.
 */
export async function signedInternal(path: string, body: unknown, secret = stack.internalSecret) {
  const raw = JSON.stringify(body);
  const signed = await signInternal(secret, { method: "POST", path: `/internal${path}`, body: raw });
  const headers = { "Content-Type": "application/json", ...signed };
  return (elsewhere: { method?: string; path?: string } = {}) =>
    api().raw<InternalReply>({
      method: elsewhere.method ?? "POST",
      path: `/internal${elsewhere.path ?? path}`,
      body: raw,
      headers,
    });
}

/** Calls the Worker's internal API as the encoder does: HMAC over the method, path and raw body, under a nonce of its own. */
export async function internal(path: string, body: unknown, secret = stack.internalSecret) {
  return (await signedInternal(path, body, secret))();
}

export const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
export const SOURCE = "https://media.example.com/source.mp4";

export async function createJob(key: string, preset = "mp4_264_720p", extra: Partial<CreateJobRequest> = {}) {
  const res = await api(key).createJob({ inputUrl: SOURCE, preset, ...extra });
  if (res.status !== 201) throw new Error(`job creation failed: ${res.status} ${res.text}`);
  return res.body;
}

/** The job as its owner reads it (GET /jobs/{id} must answer 200). */
export async function readJob(key: string, id: string) {
  return bodyOf(await api(key).getJob(id), 200);
}

import { AwsClient } from "aws4fetch";
import { JOB_DELIVERY_RETRIES, outputKeyFor } from "../../domain/jobs";

export const s3 = new AwsClient({
  accessKeyId: stack.cloud.s3.accessKeyId,
  secretAccessKey: stack.cloud.s3.secretAccessKey,
  service: "s3",
  region: stack.cloud.s3.region,
});
export const objectUrl = (key: string) => `${stack.cloud.s3.endpoint}/${stack.cloud.s3.bucket}/${key}`;

/**
 * Plays the encoder through every attempt at the job's source, each failing with `errorMessage`
 * as a failure another attempt may not meet: the Worker retries while attempts remain, each
 * retry a new dispatch, and the job ends failed with JOB_DELIVERY_RETRIES retries.
 */
export async function failEveryAttempt(jobId: string, errorMessage: string) {
  for (let dispatch = 0; dispatch <= JOB_DELIVERY_RETRIES; dispatch++) {
    const claimed = await internal(`/jobs/${jobId}/claim`, { dispatch });
    if (!claimed.body.job) throw new Error(`claim failed: ${claimed.status} ${JSON.stringify(claimed.body)}`);
    await internal(`/jobs/${jobId}/fail`, { claim: claimed.body.job.claim, errorMessage, retryable: true });
  }
}

/**
 * Plays the encoder: claim (unless the test claimed already: `lease`, its claim's), upload an
 * output, report completion. Returns the output key.
 */
export async function completeJob(jobId: string, accountId: string, content = "fake-mp4-bytes", lease?: number) {
  const claim = lease ?? (await internal(`/jobs/${jobId}/claim`, { dispatch: 0 })).body.job?.claim;
  if (claim === undefined) throw new Error(`the job ${jobId} could not be claimed`);
  const key = outputKeyFor(accountId, jobId, "output.mp4");
  const put = await s3.fetch(objectUrl(key), {
    method: "PUT",
    body: content,
    headers: { "Content-Type": "video/mp4" },
  });
  if (!put.ok) throw new Error(`upload failed: ${put.status}`);
  const done = await internal(`/jobs/${jobId}/complete`, { claim, outputKey: key, duration: 12.5 });
  if (done.status !== 200) throw new Error(`complete failed: ${done.status} ${JSON.stringify(done.body)}`);
  return key;
}
