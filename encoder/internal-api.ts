import { signInternal } from "../domain/internal-auth";
import type { PlanId } from "../domain/plans";

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

/** The job left the state the encoder was working in (cancelled, already finished, or gone). */
export class JobGoneError extends Error {
  constructor(readonly status: string) {
    super(`Job is ${status}`);
  }
}

/** The Worker's /internal API, HMAC-signed with the shared secret. */
export function createInternalApi(baseUrl: string, secret: string) {
  async function post<T>(path: string, body: unknown): Promise<T> {
    const raw = JSON.stringify(body);
    const res = await fetch(`${baseUrl.replace(/\/$/, "")}/internal${path}`, {
      method: "POST",
      headers: { "content-type": "application/json", ...(await signInternal(secret, raw)) },
      body: raw,
    });
    const json = (await res.json().catch(() => ({}))) as Record<string, unknown>;
    if (res.status === 409) throw new JobGoneError(String(json.status));
    // A job the Worker does not know (deleted with its account) will never be workable.
    if (res.status === 404) throw new JobGoneError("missing");
    if (!res.ok) throw new Error(`internal API ${path} answered ${res.status}: ${JSON.stringify(json)}`);
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
