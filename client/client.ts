import createClient from "openapi-fetch";
import { ApiError, NetworkError, toApiError } from "./errors";
import type { paths } from "./generated/openapi";
import type {
  CancelledJob,
  CreatedEdlJob,
  CreatedJob,
  CreateEdlRequest,
  CreateJobRequest,
  DownloadLink,
  EdlValidation,
  Job,
  JobList,
  ListJobsQuery,
  PresetCatalogue,
} from "./types";
import { pollJob, type WaitOptions } from "./wait";

export const DEFAULT_BASE_URL = "http://127.0.0.1:8787";

export interface ClientOptions {
  /** The service's base URL, without /api/v1. Default: the local dev service. */
  baseUrl?: string;
  /** `spk_…` or `sk_…`; only GET /presets works without one. */
  apiKey?: string;
  /** A fetch to use instead of the global one. */
  fetch?: typeof fetch;
}

export interface CreateOptions {
  /** Makes a retried creation safe: the same key and body within 24 h replays the first answer. */
  idempotencyKey?: string;
}

type Outcome<T> = { data?: T; error?: unknown; response: Response };

/**
 * A typed client for the video encoding API: one method per operation, errors thrown as ApiError
 * (or NetworkError when there is no answer), each saying whether a retry can help.
 */
export function createVepClient(options: ClientOptions = {}) {
  const baseUrl = (options.baseUrl ?? DEFAULT_BASE_URL).replace(/\/+$/, "");
  const api = createClient<paths>({
    baseUrl: `${baseUrl}/api/v1`,
    headers: options.apiKey ? { Authorization: `Bearer ${options.apiKey}` } : {},
    fetch: options.fetch,
  });
  const fetchFn = options.fetch ?? globalThis.fetch;

  async function send<T>(request: () => Promise<Outcome<T>>): Promise<T> {
    let outcome: Outcome<T>;
    try {
      outcome = await request();
    } catch (err) {
      throw new NetworkError(err);
    }
    if (!outcome.response.ok) throw toApiError(outcome.response, outcome.error);
    return outcome.data as T;
  }
  const idempotency = (o?: CreateOptions) => (o?.idempotencyKey ? { header: { "Idempotency-Key": o.idempotencyKey } } : {});

  const client = {
    baseUrl,
    createJob: (body: CreateJobRequest, o?: CreateOptions): Promise<CreatedJob> =>
      send(() => api.POST("/jobs", { body, params: idempotency(o) })),
    listJobs: (query: ListJobsQuery = {}): Promise<JobList> => send(() => api.GET("/jobs", { params: { query } })),
    getJob: (id: string): Promise<Job> => send(() => api.GET("/jobs/{id}", { params: { path: { id } } })),
    cancelJob: (id: string): Promise<CancelledJob> => send(() => api.DELETE("/jobs/{id}", { params: { path: { id } } })),
    getDownloadUrl: (id: string): Promise<DownloadLink> =>
      send(() => api.GET("/jobs/{id}/download-url", { params: { path: { id } } })),
    createEdlJob: (body: CreateEdlRequest, o?: CreateOptions): Promise<CreatedEdlJob> =>
      send(() => api.POST("/edl", { body, params: idempotency(o) })),
    validateEdl: (edl: CreateEdlRequest["edl"]): Promise<EdlValidation> => send(() => api.PUT("/edl", { body: { edl } })),
    listPresets: (): Promise<PresetCatalogue> => send(() => api.GET("/presets")),

    /** Polls GET /jobs/{id} (every 10 s unless told otherwise) until the job is completed, failed or cancelled. */
    waitForJob: (id: string, o?: WaitOptions): Promise<Job> => pollJob(() => client.getJob(id), o),

    /**
     * Signs a fresh link to a completed job's output and starts downloading it. The link needs no
     * key; the response body streams the file.
     */
    async fetchOutput(id: string, init?: { signal?: AbortSignal }): Promise<Response> {
      const { downloadUrl } = await client.getDownloadUrl(id);
      let response: Response;
      try {
        response = await fetchFn(downloadUrl, { signal: init?.signal });
      } catch (err) {
        throw new NetworkError(err);
      }
      if (!response.ok) throw new ApiError(response.status, { message: `The download answered HTTP ${response.status}` });
      return response;
    },
  };
  return client;
}

export type VepClient = ReturnType<typeof createVepClient>;
