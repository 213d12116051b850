import { afterAll, inject } from "vitest";
import { openAdmin } from "../../dev/admin/commands";
import { signInternal } from "../../domain/internal-auth";
import type { PlanId } from "../../domain/plans";

export const stack = inject("stack");

export const admin = openAdmin({ databaseUrl: stack.databaseUrl, redis: stack.cloud.redis });
afterAll(() => admin.close());

export interface ApiResponse<T = any> {
  status: number;
  body: T;
  headers: Headers;
}

export async function call<T = any>(
  method: string,
  path: string,
  opts: { key?: string; body?: unknown; rawBody?: string; headers?: Record<string, string> } = {},
): Promise<ApiResponse<T>> {
  const headers: Record<string, string> = { ...opts.headers };
  if (opts.key) headers.Authorization = `Bearer ${opts.key}`;
  let body: string | undefined = opts.rawBody;
  if (opts.body !== undefined) {
    body = JSON.stringify(opts.body);
    headers["Content-Type"] ??= "application/json";
  }
  const url = path.startsWith("http") ? path : `${stack.apiUrl}${path.startsWith("/api") || path.startsWith("/internal") || path.startsWith("/healthz") ? path : `/api/v1${path}`}`;
  const res = await fetch(url, { method, headers, body });
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    // not JSON: keep the text
  }
  return { status: res.status, body: parsed as T, headers: res.headers };
}

export async function newAccount(plan: PlanId = "free") {
  return admin.createAccount(plan);
}

/** Calls the Worker's internal API as the encoder does: HMAC over the raw body. */
export async function internal<T = any>(path: string, body: unknown, secret = stack.internalSecret) {
  const raw = JSON.stringify(body);
  return call<T>("POST", `/internal${path}`, {
    rawBody: raw,
    headers: { "Content-Type": "application/json", ...(await signInternal(secret, raw)) },
  });
}

export const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
export const SOURCE = "https://media.example.com/source.mp4";

export async function createJob(key: string, preset = "mp4_264_720p", extra: Record<string, unknown> = {}) {
  const res = await call("POST", "/jobs", { key, body: { inputUrl: SOURCE, preset, ...extra } });
  if (res.status !== 201) throw new Error(`job creation failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body as { id: string; [k: string]: unknown };
}

import { AwsClient } from "aws4fetch";
import { outputKeyFor } from "../../domain/jobs";

export const s3 = new AwsClient({
  accessKeyId: stack.cloud.s3.accessKeyId,
  secretAccessKey: stack.cloud.s3.secretAccessKey,
  service: "s3",
  region: stack.cloud.s3.region,
});
export const objectUrl = (key: string) => `${stack.cloud.s3.endpoint}/${stack.cloud.s3.bucket}/${key}`;

/** Plays the encoder: claim, upload an output, report completion. Returns the output key. */
export async function completeJob(jobId: string, accountId: string, content = "fake-mp4-bytes") {
  const claim = await internal(`/jobs/${jobId}/claim`, { attempt: 0 });
  if (claim.status !== 200) throw new Error(`claim failed: ${claim.status} ${JSON.stringify(claim.body)}`);
  const key = outputKeyFor(accountId, jobId, "output.mp4");
  const put = await s3.fetch(objectUrl(key), { method: "PUT", body: content, headers: { "Content-Type": "video/mp4" } });
  if (!put.ok) throw new Error(`upload failed: ${put.status}`);
  const done = await internal(`/jobs/${jobId}/complete`, { outputKey: key, duration: 12.5 });
  if (done.status !== 200) throw new Error(`complete failed: ${done.status} ${JSON.stringify(done.body)}`);
  return key;
}
