import { signInternal } from "../domain/internal-auth";
import type { PlanId } from "../domain/plans";
import { httpRequest, readBody } from "./http/client";

export interface ClaimedJob {
  id: string;
  attempt: number;
  accountId: string;
  preset: string;
  inputUrl: string;
  edl: unknown;
  plan: PlanId;
  maxSourceSeconds: number;
}

/**
 * The job left the state the encoder was working in (cancelled, already finished, or gone). Not
 * a JobFailure: nothing went wrong with the job, there is no errorMessage to give nor attempt to
 * retry, and nothing may be reported about it; the encoder only stops working on it.
 */
export class JobGoneError extends Error {
  constructor(readonly status: string) {
    super(`Job is ${status}`);
  }
}

/**
 * A Worker that accepted a call and then says nothing is treated as failed after this long: a
 * heartbeat or a report must not hold a job forever.
 */
const REQUEST_IDLE_TIMEOUT_MS = 60_000;

function parseObject(body: Buffer): Record<string, unknown> {
  try {
    const parsed: unknown = JSON.parse(body.toString("utf8"));
    return parsed !== null && typeof parsed === "object" ? (parsed as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

/** The Worker's /internal API, HMAC-signed with the shared secret. */
export function createInternalApi(baseUrl: string, secret: string) {
  async function post<T>(path: string, body: unknown): Promise<T> {
    const raw = JSON.stringify(body);
    const res = await httpRequest(`${baseUrl.replace(/\/$/, "")}/internal${path}`, {
      method: "POST",
      headers: { "content-type": "application/json", ...(await signInternal(secret, raw)) },
      body: raw,
      idleTimeoutMs: REQUEST_IDLE_TIMEOUT_MS,
    });
    const json = parseObject(await readBody(res));
    if (res.status === 409) throw new JobGoneError(String(json.status));
    // A job the Worker does not know (deleted with its account) will never be workable.
    if (res.status === 404) throw new JobGoneError("missing");
    if (res.status < 200 || res.status > 299) throw new Error(`internal API ${path} answered ${res.status}: ${JSON.stringify(json)}`);
    return json as T;
  }
  return {
    claim: (id: string, attempt: number) => post<{ job: ClaimedJob }>(`/jobs/${id}/claim`, { attempt }).then((r) => r.job),
    heartbeat: (id: string, progress?: number) => post<{ status: string }>(`/jobs/${id}/heartbeat`, { progress }),
    complete: (id: string, outputKey: string, duration: number | null) =>
      post<{ status: string }>(`/jobs/${id}/complete`, { outputKey, duration }),
    fail: (id: string, body: { errorMessage: string; attempt: number; final: boolean; duration?: number | null }) =>
      post<{ status: string }>(`/jobs/${id}/fail`, body),
  };
}

export type InternalApi = ReturnType<typeof createInternalApi>;
