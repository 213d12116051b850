/**
 * Replays every example request the OpenAPI document shows against the running Worker, and
 * checks each answer against the document: its status must be one the operation documents (the
 * one of the response example with the same name, where there is one), its body must fit that
 * status's schema. Real jobs stand in for the example job ids, real uploads for the upload ids.
 */
import { describe, expect, it } from "vitest";
import { usage } from "../../drizzle/schema";
import { MAX_PENDING_UPLOADS } from "../../domain/plans";
import { quotaPeriod } from "../../domain/time";
import { EXAMPLE_JOB_IDS } from "../../worker/routes/jobs/examples";
import { EXAMPLE_UPLOAD_IDS } from "../../worker/routes/uploads/examples";
import { EDL_EXAMPLE_PLAN } from "../../worker/routes/edl/examples";
import {
  describeErrors,
  dereferencedDocument,
  operationsOf,
  schemaValidator,
  type Operation,
  type Schema,
} from "../support/openapi";
import { type Answer, bodyOf as answerBody, expectStatus } from "../support/api-client";
import { admin, api, newAccount } from "./harness";
import { jobsInEveryState } from "./job-states";

type Examples = Record<string, { value: unknown }>;
type Parameter = { name: string; in: string; examples?: Examples };
type Media = { schema: Schema; examples?: Examples };

interface Replay {
  name: string;
  path: string;
  body?: unknown;
  rawBody?: string;
  key?: string | null;
  headers?: Record<string, string>;
}

const document = await dereferencedDocument();
const validator = schemaValidator();

const parametersOf = (operation: Operation) => (operation.parameters ?? []) as Parameter[];
const bodyOf = (operation: Operation) =>
  (operation.requestBody as { content: Record<string, Media> } | undefined)?.content["application/json"];
const mediaOf = (operation: Operation, status: number) =>
  (operation.responses?.[String(status)] as { content?: Record<string, Media> } | undefined)?.content?.[
    "application/json"
  ];

/** The status under which the document shows a response example of this name. */
function documentedStatusOf(operation: Operation, example: string): number | undefined {
  for (const [status, response] of Object.entries(operation.responses ?? {})) {
    const examples = (response as { content?: Record<string, Media> }).content?.["application/json"]?.examples ?? {};
    if (example in examples) return Number(status);
  }
  return undefined;
}

/** The example requests of one operation: one per path, query or body example, or a bare call. */
function replaysOf(path: string, operation: Operation, jobIds: Record<string, string>): Replay[] {
  const params = parametersOf(operation);
  const idParam = params.find((p) => p.in === "path" && p.name === "id");
  if (idParam) {
    return Object.entries(idParam.examples ?? {}).map(([name, example]) => {
      const documentedId = example.value as string;
      expect([...Object.values(EXAMPLE_JOB_IDS), ...Object.values(EXAMPLE_UPLOAD_IDS)]).toContain(documentedId);
      return { name, path: path.replace("{id}", jobIds[name] ?? documentedId) };
    });
  }
  const queries = params
    .filter((p) => p.in === "query")
    .flatMap((p) =>
      Object.entries(p.examples ?? {}).map(([name, e]) => ({
        name,
        path: `${path}?${p.name}=${encodeURIComponent(String(e.value))}`,
      })),
    );
  const bodies = Object.entries(bodyOf(operation)?.examples ?? {}).map(([name, e]) => ({ name, path, body: e.value }));
  return [...queries, ...bodies, ...(bodies.length ? [] : [{ name: "bare call", path }])];
}

async function send(method: string, replay: Replay, key: string): Promise<Answer> {
  return api(replay.key === null ? undefined : (replay.key ?? key)).raw({
    method: method.toUpperCase(),
    path: replay.path,
    json: replay.body,
    body: replay.rawBody,
    headers: replay.headers,
  });
}

function expectDocumented(method: string, path: string, operation: Operation, replay: Replay, res: Answer) {
  const where = `${method.toUpperCase()} ${path} (${replay.name}) answered ${res.status} ${JSON.stringify(res.body).slice(0, 300)}`;
  const expected = documentedStatusOf(operation, replay.name);
  // Every operation documents a 500, so a replay with no example answer of its own must still not get one.
  if (expected !== undefined) expect(res.status, where).toBe(expected);
  else expect(res.status, where).toBeLessThan(500);
  const media = mediaOf(operation, res.status);
  expect(media, `${where}: status not documented`).toBeDefined();
  const validate = validator(media!.schema);
  expect(validate(res.body), `${where}: ${describeErrors(validate)}`).toBe(true);
}

/** A real upload of each kind the upload examples name: pending (single), completed (single), multipart (no part in). */
async function uploadsOfEveryKind(apiKey: string): Promise<Record<string, string>> {
  const pending = answerBody(await api(apiKey).createUpload({ filename: "a.mp4", size: 10 }), 201);
  const completed = answerBody(await api(apiKey).createUpload({ filename: "a.mp4", size: 10 }), 201);
  const put = { method: "PUT", body: "0123456789", headers: { "Content-Type": "video/mp4" } };
  expect((await fetch(completed.uploadUrl!, put)).status).toBe(200);
  const multipart = answerBody(await api(apiKey).createUpload({ filename: "a.mp4", size: 200 * 1024 * 1024 }), 201);
  return { pending: pending.id, completed: completed.id, multipart: multipart.id };
}

describe("OpenAPI: every documented example request, replayed against the service, gets a documented answer", () => {
  const operations = operationsOf(document);
  it("covers the twelve operations", () => {
    expect(operations).toHaveLength(12);
  });

  for (const { method, path, operation } of operations) {
    const needsIds = parametersOf(operation).some((p) => p.in === "path" && p.name === "id");
    const needsUploads = needsIds && path.startsWith("/uploads/");
    const needsJobs = needsIds && !needsUploads;
    it(`${method.toUpperCase()} ${path}`, async () => {
      // The examples are written for a Starter account (EDL limits, a preset above the plan);
      // the job states take six units, so id operations run on a paid plan.
      const { apiKey, accountId } = await newAccount(needsJobs ? "pro" : EDL_EXAMPLE_PLAN);
      const jobIds = needsJobs
        ? await jobsInEveryState(apiKey, accountId)
        : needsUploads
          ? await uploadsOfEveryKind(apiKey)
          : {};
      const replays = replaysOf(path, operation, jobIds);
      expect(replays.length).toBeGreaterThan(0);
      for (const replay of replays)
        expectDocumented(method, path, operation, replay, await send(method, replay, apiKey));

      // Answers no example asks for, each still documented with its schema.
      const first = replays[0];
      const extra: Replay[] = [{ ...first, name: "no key", key: null }];
      if (bodyOf(operation)) {
        // The body is JSON whatever the Content-Type says: the same example, sent as text, gets the same answer.
        extra.push({
          ...first,
          body: undefined,
          rawBody: JSON.stringify(first.body),
          headers: { "Content-Type": "text/plain" },
        });
        extra.push({
          ...first,
          name: "unparsable body",
          body: undefined,
          rawBody: "{",
          headers: { "Content-Type": "text/plain" },
        });
        extra.push({ ...first, name: "empty object", body: {} });
      }
      for (const replay of extra) expectDocumented(method, path, operation, replay, await send(method, replay, apiKey));

      // A 409 of an operation with a body is the Idempotency-Key's (POST /uploads/{id}/complete's are its examples').
      if (operation.responses?.["409"] && bodyOf(operation)) {
        const [a, b] = Object.values(bodyOf(operation)!.examples!).filter((_, i) => i < 2);
        const headers = { "Idempotency-Key": `replay-${crypto.randomUUID()}` };
        expectDocumented(
          method,
          path,
          operation,
          { name: "first use of a key", path, body: a.value, headers },
          await send(method, { name: "", path, body: a.value, headers }, apiKey),
        );
        const reused: Replay = { name: "key reused with another body", path, body: b.value, headers };
        const res = await send(method, reused, apiKey);
        expectStatus(res, 409);
        expectDocumented(method, path, operation, reused, res);
      }
      if (operation.responses?.["429"]) {
        const exhausted = await newAccount(EDL_EXAMPLE_PLAN);
        // An upload's 429 is the account's open uploads at the plan's cap; a job's, the month's quota.
        if (path === "/uploads")
          for (let open = 0; open < MAX_PENDING_UPLOADS[EDL_EXAMPLE_PLAN]; open++)
            expectStatus(await api(exhausted.apiKey).createUpload({ filename: "a.mp4", size: 10 }), 201);
        else
          await admin.db
            .insert(usage)
            .values({ accountId: exhausted.accountId, period: quotaPeriod(new Date()), count: 10 });
        const res = await send(method, first, exhausted.apiKey);
        expectStatus(res, 429);
        expectDocumented(method, path, operation, { ...first, name: "quota used up" }, res);
      }
    });
  }
});
