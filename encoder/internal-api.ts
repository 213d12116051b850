import { signInternal } from "../domain/internal-auth";
import type { PlanId } from "../domain/plans";
import type { PartAssignment, SplitPlan } from "../domain/split";
import type { StreamLayout } from "../domain/stream/layout";
import { httpRequest, readBody } from "./http/client";

export interface ClaimedJob {
  id: string;
  /** The attempt at the source: 0 for the first, up to JOB_DELIVERY_RETRIES. */
  attempt: number;
  /** This claim's number: its heartbeats and reports name it, and the Worker refuses those of an older claim. */
  claim: number;
  accountId: string;
  preset: string;
  inputUrl: string;
  edl: unknown;
  plan: PlanId;
  maxSourceSeconds: number;
}

/** A part of a split job, claimed: its frames, the job's plan, and the part's own lease and attempt. */
export interface ClaimedPart extends PartAssignment {
  jobId: string;
}

/** One report of a stream's stored segments (worker/routes/internal/stream.ts). */
export interface StreamReport {
  claim: number;
  part?: number;
  layout?: StreamLayout;
  listed?: boolean;
  segments: { rendition: string; index: number; duration: number; start?: number; codecs?: string }[];
}

/** A split job's join, claimed: the job's lease (its own heartbeat and reports follow), and where its parts are. */
export interface ClaimedJoin {
  job: ClaimedJob;
  plan: SplitPlan;
  parts: { index: number; outputKey: string }[];
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

/** The Worker answered a call with a status that is not a success (the job's refusals aside: JobGoneError). */
export class InternalApiError extends Error {
  constructor(
    readonly path: string,
    readonly status: number,
    body: unknown,
  ) {
    super(`internal API ${path} answered ${status}: ${JSON.stringify(body)}`);
  }
}

/**
 * Whether asking again may get another answer: the Worker, its database or the network failing
 * (5xx, 429, no answer) may pass; a refusal (4xx) will not.
 */
function isTransient(err: unknown): boolean {
  if (err instanceof JobGoneError) return false;
  if (err instanceof InternalApiError) return err.status >= 500 || err.status === 429;
  return true;
}

/** An error in one line for the job's log: its class and message, and its code when it has one. */
export function briefly(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  const code = (err as { code?: unknown }).code;
  return `${err.name}: ${err.message}${typeof code === "string" && !err.message.includes(code) ? ` (${code})` : ""}`;
}

/**
 * A Worker that accepted a call and then says nothing is treated as failed after this long: a
 * heartbeat or a report must not hold a job forever.
 */
const REQUEST_IDLE_TIMEOUT_MS = 60_000;
/** The first wait before asking again; each later one doubles, up to the last. */
const FIRST_RETRY_DELAY_MS = 500;
const MAX_RETRY_DELAY_MS = 10_000;

export interface InternalApiOptions {
  /**
   * How long a claim or a report (complete, fail) is asked again while the Worker's answers are
   * transient (see isTransient): the job's work is done or about to start, and an outage of the
   * Worker or its database must not cost it an attempt.
   */
  retryForMs: number;
  /** Told before each wait, for the job's log. */
  onRetry?: (jobId: string, call: InternalCall, err: unknown, waitMs: number) => void;
}

/** The calls asked again while the Worker fails (the heartbeats are not: the next beat is the retry). */
export type InternalCall =
  | "claim"
  | "complete"
  | "fail"
  | "split"
  | "part claim"
  | "part complete"
  | "part fail"
  | "join claim"
  | "stream";

function parseObject(body: Buffer): Record<string, unknown> {
  try {
    const parsed: unknown = JSON.parse(body.toString("utf8"));
    return parsed !== null && typeof parsed === "object" ? (parsed as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The Worker's /internal API, HMAC-signed with the shared secret. */
export function createInternalApi(baseUrl: string, secret: string, options: InternalApiOptions) {
  async function post<T>(path: string, body: unknown): Promise<T> {
    const raw = JSON.stringify(body);
    // Signed as the Worker's router sees it: the route alone, whatever base a proxy serves it under.
    const route = `/internal${path}`;
    const res = await httpRequest(`${baseUrl.replace(/\/$/, "")}${route}`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      signedHeaders: () => signInternal(secret, { method: "POST", path: route, body: raw }),
      body: raw,
      idleTimeoutMs: REQUEST_IDLE_TIMEOUT_MS,
    });
    const json = parseObject(await readBody(res));
    if (res.status === 409) throw new JobGoneError(String(json.status));
    // A job the Worker does not know (deleted with its account) will never be workable.
    if (res.status === 404) throw new JobGoneError("missing");
    if (res.status < 200 || res.status > 299) throw new InternalApiError(path, res.status, json);
    return json as T;
  }

  /**
   * `post`, asked again with jittered doubling waits while the failure is transient and the
   * retry window lasts. The Worker answers a repeated report as it answered the first, so a
   * report whose answer was lost is safe to send again.
   */
  async function postRetrying<T>(jobId: string, call: InternalCall, body: unknown, path: string = call): Promise<T> {
    const deadline = Date.now() + options.retryForMs;
    for (let delay = FIRST_RETRY_DELAY_MS; ; delay = Math.min(delay * 2, MAX_RETRY_DELAY_MS)) {
      try {
        return await post<T>(`/jobs/${jobId}/${path}`, body);
      } catch (err) {
        const wait = Math.round(delay * (0.5 + Math.random() / 2));
        if (!isTransient(err) || Date.now() + wait > deadline) throw err;
        options.onRetry?.(jobId, call, err, wait);
        await sleep(wait);
      }
    }
  }

  return {
    claim: (id: string, dispatch: number) =>
      postRetrying<{ job: ClaimedJob }>(id, "claim", { dispatch }).then((r) => r.job),
    heartbeat: (id: string, claim: number, beat: { progress?: number; duration?: number }) =>
      post<{ status: string }>(`/jobs/${id}/heartbeat`, { claim, ...beat }),
    complete: (id: string, claim: number, outputKey: string, duration: number | null) =>
      postRetrying<{ status: string }>(id, "complete", { claim, outputKey, duration }),
    /** Answers the job's status after the report: `queued` when the Worker dispatched a retry, `failed` when none follows. */
    fail: (id: string, claim: number, body: { errorMessage: string; retryable: boolean; duration?: number | null }) =>
      postRetrying<{ status: string }>(id, "fail", { claim, ...body }),
    /**
     * Hands the job's plan to the Worker, with the tasks whose inputs are stored so far (all of
     * them when absent), and again as more are; the Worker publishes a message per stored task
     * but those in `keep`, which it answers as `kept` (each with its dispatch) for this encoder to
     * claim and run (docs/scaling.md).
     */
    split: (id: string, claim: number, plan: SplitPlan, stored?: readonly number[], keep?: readonly number[]) =>
      postRetrying<{ parts: number; kept?: { index: number; dispatch: number }[] }>(id, "split", {
        claim,
        plan,
        stored,
        keep,
      }),
    claimPart: (id: string, index: number, dispatch: number) =>
      postRetrying<PartAssignment>(id, "part claim", { dispatch }, `parts/${index}/claim`).then(
        (claimed): ClaimedPart => ({ ...claimed, jobId: id }),
      ),
    partHeartbeat: (id: string, index: number, claim: number, beat: { progress?: number }) =>
      post<{ status: string }>(`/jobs/${id}/parts/${index}/heartbeat`, { claim, ...beat }),
    completePart: (id: string, index: number, claim: number, outputKey: string) =>
      postRetrying<{ status: string }>(id, "part complete", { claim, outputKey }, `parts/${index}/complete`),
    /** Answers `queued` when the part is tried again, `failed` when it has spent its attempts and the job failed. */
    failPart: (id: string, index: number, claim: number, body: { errorMessage: string; retryable: boolean }) =>
      postRetrying<{ status: string }>(id, "part fail", { claim, ...body }, `parts/${index}/fail`),
    /**
     * Segments of a streaming output stored (docs/playback.md), by the job's claim or a part's;
     * the layout with the first. `listed` asks for the runs the Worker has recorded so far (a
     * stream made again skips storing what is listed).
     */
    stream: (id: string, report: StreamReport) =>
      postRetrying<{ status: string; playable: boolean; listed?: Record<string, number> }>(id, "stream", report),
    claimJoin: (id: string, dispatch: number) =>
      postRetrying<ClaimedJoin>(id, "join claim", { dispatch }, "join/claim"),
  };
}

export type InternalApi = ReturnType<typeof createInternalApi>;
