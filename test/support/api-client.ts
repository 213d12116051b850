/**
 * The suites' one client for the API. Each operation of the OpenAPI document is a method typed by
 * the client's generated types (requests built by openapi-fetch), and answers come back whatever
 * their status, never thrown: `{status, body, text, headers}`, the body typed per documented
 * status. `expectStatus` (and `expectError`, with the error class; `bodyOf`, returning the body)
 * check the status and narrow the body to that status's shape.
 *
 * Tests need what the typed client will not send: `unchecked(value)` and `rawBody(text)` stand
 * where a typed body goes (a body off the contract, malformed JSON, another Content-Type), and
 * `raw()` sends any method, path, headers and bytes (the internal API, unknown routes, hostile
 * requests). Both go through the same exchange: fetch by default (the app's own fetch inside
 * workerd), or test/support/exact-http.ts where bytes must reach the wire exactly as written.
 */
import createClient from "openapi-fetch";
import { expect } from "vitest";
import type { components, operations, paths } from "../../client/generated/openapi";
import type { CreateEdlRequest, CreateJobRequest, ListJobsQuery } from "../../client/types";

/** An answer as a test sees it. */
export interface Answer<Body = unknown> {
  status: number;
  /** The body parsed as JSON, or its text when it is not JSON. */
  body: Body;
  text: string;
  headers: Headers;
}

type Responses<Op extends keyof operations> = operations[Op]["responses"];
type JsonOf<R> = R extends { content: { "application/json": infer B } } ? B : unknown;

/** The answers an operation documents, one per status, each with that status's body. */
type OperationAnswer<Op extends keyof operations> = {
  [S in keyof Responses<Op>]: Omit<Answer<JsonOf<Responses<Op>[S]>>, "status"> & { status: S };
}[keyof Responses<Op>];

type HeaderValues = Record<string, string | string[] | undefined>;

export interface RawRequest {
  method: string;
  /**
   * Under /api/v1 unless it starts at one of the service's other roots (/api, /internal,
   * /healthz, /docs, /dashboard); sent as written, dot segments and stray `%` included.
   */
  path: string;
  headers?: HeaderValues;
  /** Sent as JSON text, with Content-Type application/json unless `headers` name another. */
  json?: unknown;
  body?: string | Uint8Array | ReadableStream<Uint8Array>;
}

/** A request as it goes on the wire: the service's origin and the path as sent. */
export interface WireRequest {
  method: string;
  origin: string;
  path: string;
  headers: HeaderValues;
  body?: string | Uint8Array | ReadableStream<Uint8Array>;
}

/** Sends one request and reads the whole answer. */
export type Exchange = (request: WireRequest) => Promise<Answer>;

const OTHER_ROOTS = /^\/(api|internal|healthz|docs|dashboard)(\/|$|\?)/;

function servicePath(path: string): string {
  return OTHER_ROOTS.test(path) ? path : `/api/v1${path}`;
}

export function parseBody(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

async function answerOf(response: Response): Promise<Answer> {
  const text = await response.text();
  return { status: response.status, body: parseBody(text), text, headers: response.headers };
}

/**
 * Over fetch: the global one, or any function that answers a Request (the app inside workerd).
 * With `timeoutMs`, a request not answered in time rejects with a TimeoutError.
 */
export function fetchExchange(
  fetchFn: (request: Request) => Promise<Response> = (request) => fetch(request),
  options: { timeoutMs?: number } = {},
): Exchange {
  return async (request) => {
    const headers = new Headers();
    for (const [name, value] of Object.entries(request.headers)) {
      for (const one of [value ?? []].flat()) headers.append(name, one);
    }
    // A stream needs half-duplex in Node's fetch; workerd ignores it.
    const signal = options.timeoutMs === undefined ? undefined : AbortSignal.timeout(options.timeoutMs);
    const init = { method: request.method, headers, body: request.body, duplex: "half", signal } as RequestInit;
    return answerOf(await fetchFn(new Request(`${request.origin}${request.path}`, init)));
  };
}

/** A body off the contract, sent where the operation's typed body goes. */
class Unchecked {
  constructor(
    readonly text: string,
    readonly contentType: string,
  ) {}
}

/** Any value as JSON, whatever the operation's schema says. */
export const unchecked = (value: unknown) => new Unchecked(JSON.stringify(value), "application/json");

/** These exact characters as the body (malformed JSON, an empty body), under this Content-Type. */
export const rawBody = (text: string, contentType = "application/json") => new Unchecked(text, contentType);

type Body<T> = T | Unchecked;

export interface CallOptions {
  headers?: Record<string, string>;
}

export interface CreationOptions extends CallOptions {
  idempotencyKey?: string;
}

export interface ApiClientOptions {
  /** The service's origin, without /api/v1. */
  baseUrl: string;
  /** Sent as `Authorization: Bearer <key>` unless a request names an Authorization of its own. */
  apiKey?: string;
  exchange?: Exchange;
  /** Sees every request and its answer (the security campaigns scan them for leaks). */
  onAnswer?: (request: WireRequest, answer: Answer) => void;
}

const hasHeader = (headers: HeaderValues, name: string) =>
  Object.keys(headers).some((h) => h.toLowerCase() === name.toLowerCase());

/** The request `raw()` sends: the key's Authorization unless the request has its own, JSON encoded. */
export function wireRequest(origin: string, request: RawRequest, apiKey?: string): WireRequest {
  const headers: HeaderValues = {
    ...(apiKey && !hasHeader(request.headers ?? {}, "Authorization") ? { Authorization: `Bearer ${apiKey}` } : {}),
    ...request.headers,
  };
  let body = request.body;
  if (request.json !== undefined) {
    body = JSON.stringify(request.json);
    if (!hasHeader(headers, "Content-Type")) headers["Content-Type"] = "application/json";
  }
  return { method: request.method, origin, path: servicePath(request.path), headers, body };
}

export function createApiClient(options: ApiClientOptions) {
  const origin = options.baseUrl.replace(/\/+$/, "");
  const exchange = options.exchange ?? fetchExchange();

  async function send(request: WireRequest): Promise<Answer> {
    const answer = await exchange(request);
    options.onAnswer?.(request, answer);
    return answer;
  }

  const openapi = createClient<paths>({
    baseUrl: `${origin}/api/v1`,
    headers: options.apiKey ? { Authorization: `Bearer ${options.apiKey}` } : {},
    bodySerializer: (body: unknown) => (body instanceof Unchecked ? body.text : JSON.stringify(body)),
  });

  /**
   * openapi-fetch builds the request; the exchange sends it and the answer is read here, whatever
   * its status. openapi-fetch is handed an empty response, as nothing is taken from its result.
   */
  async function operation<Op extends keyof operations>(
    build: (fetch: (request: Request) => Promise<Response>) => Promise<unknown>,
  ) {
    let answer: Answer | undefined;
    await build(async (request) => {
      const url = new URL(request.url);
      const body = request.body ? new Uint8Array(await request.arrayBuffer()) : undefined;
      answer = await send({
        method: request.method,
        origin: url.origin,
        path: `${url.pathname}${url.search}`,
        headers: Object.fromEntries(request.headers),
        body,
      });
      return new Response(null, { status: 204 });
    });
    return answer as OperationAnswer<Op>;
  }

  const headersFor = (body: unknown, o: CreationOptions = {}) => ({
    ...(body instanceof Unchecked ? { "Content-Type": body.contentType } : {}),
    ...(o.idempotencyKey ? { "Idempotency-Key": o.idempotencyKey } : {}),
    ...o.headers,
  });

  return {
    createJob: (body: Body<CreateJobRequest>, o?: CreationOptions) =>
      operation<"createJob">((fetch) =>
        openapi.POST("/jobs", { body: body as CreateJobRequest, headers: headersFor(body, o), fetch }),
      ),
    /** A string is sent as the query string exactly as written. */
    listJobs: (query: ListJobsQuery | string = {}, o?: CallOptions) =>
      operation<"listJobs">((fetch) =>
        openapi.GET(
          "/jobs",
          typeof query === "string"
            ? { querySerializer: () => query, headers: o?.headers, fetch }
            : { params: { query }, headers: o?.headers, fetch },
        ),
      ),
    getJob: (id: string, o?: CallOptions) =>
      operation<"getJob">((fetch) =>
        openapi.GET("/jobs/{id}", { params: { path: { id } }, headers: o?.headers, fetch }),
      ),
    cancelJob: (id: string, o?: CallOptions) =>
      operation<"cancelJob">((fetch) =>
        openapi.DELETE("/jobs/{id}", { params: { path: { id } }, headers: o?.headers, fetch }),
      ),
    getDownloadUrl: (id: string, o?: CallOptions) =>
      operation<"getDownloadUrl">((fetch) =>
        openapi.GET("/jobs/{id}/download-url", { params: { path: { id } }, headers: o?.headers, fetch }),
      ),
    createEdlJob: (body: Body<CreateEdlRequest>, o?: CreationOptions) =>
      operation<"createEdlJob">((fetch) =>
        openapi.POST("/edl", { body: body as CreateEdlRequest, headers: headersFor(body, o), fetch }),
      ),
    validateEdl: (body: Body<{ edl: CreateEdlRequest["edl"] }>, o?: CallOptions) =>
      operation<"validateEdl">((fetch) =>
        openapi.PUT("/edl", { body: body as { edl: CreateEdlRequest["edl"] }, headers: headersFor(body, o), fetch }),
      ),
    createUpload: (body: Body<components["schemas"]["CreateUploadRequest"]>, o?: CallOptions) =>
      operation<"createUpload">((fetch) =>
        openapi.POST("/uploads", {
          body: body as components["schemas"]["CreateUploadRequest"],
          headers: headersFor(body, o),
          fetch,
        }),
      ),
    getUpload: (id: string, o?: CallOptions) =>
      operation<"getUpload">((fetch) =>
        openapi.GET("/uploads/{id}", { params: { path: { id } }, headers: o?.headers, fetch }),
      ),
    completeUpload: (id: string, o?: CallOptions) =>
      operation<"completeUpload">((fetch) =>
        openapi.POST("/uploads/{id}/complete", { params: { path: { id } }, headers: o?.headers, fetch }),
      ),
    listPresets: (o?: CallOptions) =>
      operation<"listPresets">((fetch) => openapi.GET("/presets", { headers: o?.headers, fetch })),

    /** Anything at all; the body's type is the caller's to state (unknown unless it does). */
    async raw<B = unknown>(request: RawRequest): Promise<Answer<B>> {
      return (await send(wireRequest(origin, request, options.apiKey))) as Answer<B>;
    },
  };
}

export type ApiClient = ReturnType<typeof createApiClient>;

/** An operation's answer at one status; a raw answer (any status) stays as it is. */
export type AnswerAt<A extends Answer<unknown>, S> = number extends A["status"] ? A : Extract<A, { status: S }>;

/** Fails unless the answer has this status (its body in the message); narrows the body to that status's shape. */
export function expectStatus<A extends Answer<unknown>, S extends A["status"]>(
  answer: A,
  status: S,
  message?: string,
): asserts answer is AnswerAt<A, S> {
  expect(answer.status, message ?? answer.text.slice(0, 1000)).toBe(status);
}

type ErrorClassIn<B> = B extends { error: infer E } ? E : never;

/** Fails unless the answer has this status and this `error` class; narrows the body to that class's shape. */
export function expectError<A extends Answer<unknown>, S extends A["status"], const E extends string>(
  answer: A,
  status: S,
  error: E & ErrorClassIn<AnswerAt<A, S>["body"]>,
  message?: string,
): asserts answer is AnswerAt<A, S> & { body: { error: E } } {
  expectStatus(answer, status, message);
  expect((answer.body as { error?: unknown }).error, message ?? answer.text.slice(0, 1000)).toBe(error);
}

/** The body of an answer that must have this status. */
export function bodyOf<A extends Answer<unknown>, S extends A["status"]>(answer: A, status: S): AnswerAt<A, S>["body"] {
  expectStatus(answer, status);
  return answer.body;
}
