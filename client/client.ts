import createClient, { type Middleware } from "openapi-fetch";
import { DownloadError, NetworkError, toApiError, UnexpectedResponseError } from "./errors";
import type { paths } from "./generated/openapi";
import type {
  CancelledJob,
  CreatedEdlJob,
  CreatedJob,
  CreateEdlRequest,
  CreateJobRequest,
  CreateUploadRequest,
  DownloadLink,
  EdlValidation,
  Job,
  JobList,
  ListJobsQuery,
  PresetCatalogue,
  Upload,
} from "./types";
import { upload, type UploadOptions, type UploadSource } from "./upload";
import { type PlayableJob, pollJob, pollUntilPlayable, type ReadJob, type WaitOptions } from "./wait";

export const DEFAULT_BASE_URL = "http://127.0.0.1:8787";

export interface ClientOptions {
  /** The service's base URL, without /api/v1. Default: the local dev service. */
  baseUrl?: string;
  /** `spk_…` or `sk_…`; only GET /presets works without one. */
  apiKey?: string;
  /** A fetch to use instead of the global one. */
  fetch?: typeof fetch;
  /** How long one API call may wait for its answer before it fails as a NetworkError (retryable). Default 60 s. */
  timeoutMs?: number;
}

export interface CallOptions {
  /** Aborting it abandons the call at once; the call rejects with the signal's reason. */
  signal?: AbortSignal;
}

const DEFAULT_TIMEOUT_MS = 60_000;

/**
 * How a connection that closed before any answer fails in Node's fetch: most often a kept-alive
 * connection the server closed just as it was reused, which undici does not try again
 * (nodejs/undici#3492).
 */
const CLOSED_CONNECTION = new Set(["UND_ERR_SOCKET", "ECONNRESET", "EPIPE"]);

function closedBeforeAnswer(err: unknown): boolean {
  const code = err instanceof Error ? (err.cause as { code?: unknown } | undefined)?.code : undefined;
  return typeof code === "string" && CLOSED_CONNECTION.has(code);
}

/** A random Idempotency-Key; crypto.randomUUID is missing from pages served over plain http. */
function newIdempotencyKey(): string {
  return Array.from(crypto.getRandomValues(new Uint8Array(16)), (b) => b.toString(16).padStart(2, "0")).join("");
}

/** A base URL and key that cannot make a request are refused when the client is made, not at its first call. */
function checkOptions(baseUrl: string, apiKey: string | undefined) {
  let url: URL | undefined;
  try {
    url = new URL(baseUrl);
  } catch {
    url = undefined;
  }
  if (!url || !["http:", "https:"].includes(url.protocol))
    throw new TypeError(`The base URL must be an http(s) URL, such as ${DEFAULT_BASE_URL}: ${JSON.stringify(baseUrl)}`);
  // Never quoted: the key is a secret, and a mangled one is usually the real key with a stray newline.
  if (apiKey && !/^[\x21-\x7e]+$/.test(apiKey))
    throw new TypeError("The API key holds spaces or control characters (a stray newline?): pass the key alone");
}

export interface CreateOptions extends CallOptions {
  /** Makes a retried creation safe: the same key and body within 24 h replays the first answer. */
  idempotencyKey?: string;
}

type Outcome<T> = { data?: T; error?: unknown; response: Response };

/** What each call hands openapi-fetch: its signal, and a middleware that keeps the answer. */
type CallInit = { signal: AbortSignal; middleware: Middleware[] };

/**
 * A creation's answer, and whether it replays an earlier one (the same Idempotency-Key and body:
 * no new job, no quota unit). `replayed` is not enumerable, so the object prints and serialises as
 * the API's JSON.
 */
export type Created<T> = T & { readonly replayed: boolean };

/**
 * A typed client for the video encoding API: one method per operation, errors thrown as ApiError
 * (or NetworkError when there is no answer, UnexpectedResponseError when a success's body is not
 * JSON), each saying whether a retry can help.
 */
export function createVepClient(options: ClientOptions = {}) {
  const baseUrl = (options.baseUrl ?? DEFAULT_BASE_URL).replace(/\/+$/, "");
  checkOptions(baseUrl, options.apiKey);
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const api = createClient<paths>({
    baseUrl: `${baseUrl}/api/v1`,
    headers: options.apiKey ? { Authorization: `Bearer ${options.apiKey}` } : {},
    fetch: options.fetch,
  });
  const fetchFn = options.fetch ?? globalThis.fetch;

  /**
   * One API call, given up after timeoutMs or when the caller's signal aborts; its body and
   * response. A `replayable` call (one that changes nothing, or a creation under its
   * Idempotency-Key) is sent once more when its connection closed before any answer.
   */
  async function exchange<T>(
    request: (init: CallInit) => Promise<Outcome<T>>,
    o: CallOptions | undefined,
    replayable: boolean,
  ): Promise<{ data: T; response: Response }> {
    const signal = AbortSignal.any([AbortSignal.timeout(timeoutMs), ...(o?.signal ? [o.signal] : [])]);
    for (let attempt = 1; ; attempt++) {
      // openapi-fetch throws alike for no answer and for an answer it cannot parse; which it was decides whether a retry can help.
      let answer: Response | undefined;
      const keepAnswer: Middleware = {
        onResponse({ response }) {
          answer = response;
        },
      };
      let outcome: Outcome<T>;
      try {
        outcome = await request({ signal, middleware: [keepAnswer] });
      } catch (err) {
        if (o?.signal?.aborted) throw o.signal.reason;
        if (answer && err instanceof SyntaxError)
          throw new UnexpectedResponseError(answer.status, answer.headers.get("Content-Type"));
        if (replayable && attempt === 1 && !answer && !signal.aborted && closedBeforeAnswer(err)) continue;
        throw new NetworkError(err);
      }
      if (!outcome.response.ok) throw toApiError(outcome.response, outcome.error);
      return { data: outcome.data as T, response: outcome.response };
    }
  }
  /** A call that changes nothing, or that a second sending does no harm. */
  const send = async <T>(request: (init: CallInit) => Promise<Outcome<T>>, o?: CallOptions): Promise<T> =>
    (await exchange(request, o, true)).data;
  /** A call whose second sending could answer otherwise than its first (a cancel, a completion): sent once. */
  const sendOnce = async <T>(request: (init: CallInit) => Promise<Outcome<T>>, o?: CallOptions): Promise<T> =>
    (await exchange(request, o, false)).data;
  const create = async <T extends object>(
    request: (init: CallInit) => Promise<Outcome<T>>,
    o?: CallOptions,
  ): Promise<Created<T>> => {
    const { data, response } = await exchange(request, o, true);
    return Object.defineProperty(data, "replayed", {
      value: response.headers.get("Idempotent-Replayed") === "true",
      enumerable: false,
    }) as Created<T>;
  };
  // Every creation carries a key, the caller's or a fresh one made once per call, so sending it
  // again cannot make a second job.
  const idempotency = (o?: CreateOptions) => ({
    header: { "Idempotency-Key": o?.idempotencyKey ?? newIdempotencyKey() },
  });
  /** A wait's read of one job, given up when the wait's signal aborts. */
  const readJob =
    (id: string): ReadJob =>
    (signal) =>
      client.getJob(id, { signal });
  const client = {
    baseUrl,
    createJob: (body: CreateJobRequest, o?: CreateOptions): Promise<Created<CreatedJob>> => {
      const params = idempotency(o);
      return create((init) => api.POST("/jobs", { body, params, ...init }), o);
    },
    listJobs: (query: ListJobsQuery = {}, o?: CallOptions): Promise<JobList> =>
      send((init) => api.GET("/jobs", { params: { query }, ...init }), o),
    getJob: (id: string, o?: CallOptions): Promise<Job> =>
      send((init) => api.GET("/jobs/{id}", { params: { path: { id } }, ...init }), o),
    cancelJob: (id: string, o?: CallOptions): Promise<CancelledJob> =>
      sendOnce((init) => api.DELETE("/jobs/{id}", { params: { path: { id } }, ...init }), o),
    getDownloadUrl: (id: string, o?: CallOptions): Promise<DownloadLink> =>
      send((init) => api.GET("/jobs/{id}/download-url", { params: { path: { id } }, ...init }), o),
    createEdlJob: (body: CreateEdlRequest, o?: CreateOptions): Promise<Created<CreatedEdlJob>> => {
      const params = idempotency(o);
      return create((init) => api.POST("/edl", { body, params, ...init }), o);
    },
    validateEdl: (edl: CreateEdlRequest["edl"], o?: CallOptions): Promise<EdlValidation> =>
      send((init) => api.PUT("/edl", { body: { edl }, ...init }), o),
    listPresets: (o?: CallOptions): Promise<PresetCatalogue> => send((init) => api.GET("/presets", init), o),
    // A second pending upload takes no quota, and one never used expires (docs/uploads.md).
    createUpload: (body: CreateUploadRequest, o?: CallOptions): Promise<Upload> =>
      send((init) => api.POST("/uploads", { body, ...init }), o),
    getUpload: (id: string, o?: CallOptions): Promise<Upload> =>
      send((init) => api.GET("/uploads/{id}", { params: { path: { id } }, ...init }), o),
    completeUpload: (id: string, o?: CallOptions): Promise<Upload> =>
      sendOnce((init) => api.POST("/uploads/{id}/complete", { params: { path: { id } }, ...init }), o),

    /**
     * Uploads a file (a Blob or File; in Node, `fs.openAsBlob(path)`), bytes, or a stream of
     * known `size` directly (docs/uploads.md), in one PUT or in parts as the service chooses, each
     * part tried again alone; answers the upload, whose `inputUrl` is a job's source like any URL.
     */
    upload: (source: UploadSource, o?: UploadOptions): Promise<Upload> => upload(client, fetchFn, source, o),

    /**
     * Polls GET /jobs/{id} (every 10 s unless told otherwise) until the job is completed, failed
     * or cancelled, and resolves with that read; a WaitTimeoutError after `timeoutMs`, if given.
     */
    waitForJob: (id: string, o?: WaitOptions): Promise<Job> => pollJob(id, readJob(id), o),

    /**
     * Polls GET /jobs/{id} (every 10 s unless told otherwise) until a streaming job can be
     * watched, and resolves with the first read that carries its `playbackUrl`: usually while it
     * is still processing (docs/playback.md), or once it completed. Rejects with a
     * NotPlayableError when the job failed, was cancelled, or completed without one (a preset that
     * is not a stream), and with a WaitTimeoutError after `timeoutMs`, if given. The job goes on
     * either way; `waitForJob` then waits for its end.
     *
     * @example
     * const job = await vep.createJob({ inputUrl, preset: "hls_abr_264_basic" });
     * const { playbackUrl } = await vep.waitForPlayable(job.id, { intervalMs: 2_000, timeoutMs: 120_000 });
     * hls.loadSource(playbackUrl); // hls.js; Safari plays it as a <video> src
     * const done = await vep.waitForJob(job.id);
     */
    waitForPlayable: (id: string, o?: WaitOptions): Promise<PlayableJob> => pollUntilPlayable(id, readJob(id), o),

    /**
     * Signs a fresh link to a completed job's output and starts downloading it. The link needs no
     * key; the response body streams the file. The storage's refusal of the link is a DownloadError,
     * not an ApiError: the API's own 403 and 404 mean something else.
     */
    async fetchOutput(id: string, init?: CallOptions): Promise<Response> {
      const { downloadUrl } = await client.getDownloadUrl(id, init);
      // The storage has timeoutMs to answer, as the API has; the file then streams for as long as
      // it takes (a large one over a slow line), bounded by the caller's signal alone.
      const unanswered = new AbortController();
      const timer = setTimeout(
        () => unanswered.abort(new Error(`the storage did not answer within ${timeoutMs} ms`)),
        timeoutMs,
      );
      let response: Response;
      try {
        response = await fetchFn(downloadUrl, {
          signal: AbortSignal.any([unanswered.signal, ...(init?.signal ? [init.signal] : [])]),
        });
      } catch (err) {
        if (init?.signal?.aborted) throw init.signal.reason;
        throw new NetworkError(err);
      } finally {
        clearTimeout(timer);
      }
      if (!response.ok) {
        await response.body?.cancel();
        throw new DownloadError(response.status);
      }
      return response;
    },
  };
  return client;
}

export type VepClient = ReturnType<typeof createVepClient>;
