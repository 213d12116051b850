/**
 * Campaign: hostile input on the job routes. Bodies, query strings, path ids and headers from
 * arbitraries.ts; the service must never answer 5xx or hang, every error must be the contract's
 * shape, every 2xx the contract's body, and a created job must read back exactly as sent.
 */
import fc from "fast-check";
import { beforeAll, describe, expect, it } from "vitest";
import { PRESET_IDS } from "../../domain/presets/catalogue";
import { BODY_LIMITS } from "../../worker/middleware/body-limit";
import { completeJob } from "../api/harness";
import { expectStatus } from "../support/api-client";
import { account, seedVictim, type Victim } from "./accounts";
import {
  anyBody,
  documentOf,
  hostileKey,
  jsonText,
  objectText,
  parsedAsSent,
  pathId,
  PROTOTYPE_KEYS,
  queryString,
  shortHostileString,
  type Body,
  type JsonText,
} from "./arbitraries";
import { refusedForgery, requestOf, type Sender, senderOf } from "./senders";
import { type Caller, clientAs, type Incoming, send } from "./client";
import {
  cancelResponse,
  creationResponse,
  downloadUrlResponse,
  expectContractBody,
  expectContractError,
  jobList,
  jobRead,
} from "./contract";
import { countCase, fuzz } from "./fuzz";

/** Cases per property: the file's share of the campaign's time. */
const RUNS = { create: 900, createExact: 300, list: 1000, jobRoute: 1000 };

let callers: Caller[];
let ownIds: Map<string, string[]>;
let victim: Victim;

async function createOwnJobs(caller: Caller): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < 3; i++) {
    const res = await clientAs(caller).createJob({
      inputUrl: "https://media.example.com/own.mp4",
      preset: "mp4_264_720p",
    });
    expectStatus(res, 201);
    ids.push(res.body.id);
  }
  await completeJob(ids[0], caller.accountId);
  return ids;
}

beforeAll(async () => {
  victim = await seedVictim();
  callers = [await account("free"), await account("pro"), await account("enterprise")];
  ownIds = new Map(await Promise.all(callers.map(async (c) => [c.accountId, await createOwnJobs(c)] as const)));
});

const sender = senderOf(12);

const request = (who: Sender, method: string, path: string, body?: Body) => requestOf(callers, who, method, path, body);

const webUrl = fc.webUrl({ withQueryParameters: true, withFragments: true, validSchemes: ["http", "https"] });
const oddUrls = fc.constantFrom(
  "http://127.0.0.1:5432/",
  "http://[::1]/a.mp4",
  "http://user:pass@media.example.com/a.mp4",
  "javascript:alert(1)",
  "file:///etc/passwd",
  "ftp://media.example.com/a.mp4",
  "http://",
  "https://a b.example/x",
  "//media.example.com/a.mp4",
  "https://media.example.com/\u0000.mp4",
  "https://xn--nxasmq6b.example/a.mp4",
  `https://media.example.com/${"a".repeat(20_000)}.mp4`,
);
const str = (a: fc.Arbitrary<string>) => a.map((s): JsonText => JSON.stringify(s));

const inputUrlText = fc.oneof(
  { arbitrary: str(webUrl), weight: 4 },
  { arbitrary: str(oddUrls), weight: 1 },
  { arbitrary: str(shortHostileString), weight: 1 },
  { arbitrary: jsonText, weight: 1 },
);
const presetText = fc.oneof(
  { arbitrary: str(fc.constantFrom(...PRESET_IDS, "edl_custom", "MP4_264_720P")), weight: 4 },
  { arbitrary: str(shortHostileString), weight: 1 },
  { arbitrary: jsonText, weight: 1 },
);
const metadataText = fc.oneof(
  objectText(fc.array(fc.tuple(hostileKey, jsonText), { maxLength: 6 })),
  objectText(fc.array(fc.tuple(fc.constantFrom(...PROTOTYPE_KEYS), jsonText), { minLength: 1, maxLength: 3 })),
  fc.constantFrom("null", "[]", '"x"', "1", "true"),
  jsonText,
);
const extraField = fc.tuple(
  fc.oneof(fc.constantFrom("webhookUrl", "id", "status", "accountId", "outputKey", "inputUrl", "preset"), hostileKey),
  jsonText,
);

/** A creation body: the three fields (each maybe missing or wrong), extra and repeated keys. */
const jobDocument: fc.Arbitrary<JsonText> = documentOf(
  {
    inputUrl: { arbitrary: inputUrlText, freq: 8 },
    preset: { arbitrary: presetText, freq: 8 },
    metadata: { arbitrary: metadataText, freq: 2 },
  },
  extraField,
);

const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/**
 * What cannot be stored as sent, anywhere, key or value: NUL or an unpaired surrogate (text
 * Postgres cannot store), or a number past a double's range (1e400, which JSON.parse reads as
 * Infinity and JSON would store as null).
 */
function cannotStoreAsSent(value: unknown): boolean {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: U+0000 is a character Postgres cannot store: finding it is the point.
  const bad = (s: string) => /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/.test(s);
  if (typeof value === "string") return bad(value);
  if (typeof value === "number") return !Number.isFinite(value);
  if (Array.isArray(value)) return value.some(cannotStoreAsSent);
  if (isPlainObject(value)) return Object.entries(value).some(([k, v]) => bad(k) || cannotStoreAsSent(v));
  return false;
}

/** A job that was created must read back as sent: its URL, preset and caller metadata, as JSON keeps them. */
async function expectStoredAsSent(who: Sender, created: Incoming, body: Body) {
  const sent = parsedAsSent(body) as { inputUrl: string; preset: string; metadata?: unknown };
  const job = created.body as { id: string };
  const read = await send(request({ ...who, authorization: undefined }, "GET", `/jobs/${job.id}`));
  expectContractBody(jobRead, read);
  const stored = read.body as { inputUrl: string; preset: string; clientMetadata: unknown };
  expect(stored.inputUrl).toBe(sent.inputUrl);
  expect(stored.preset).toBe(sent.preset);
  expect(stored.clientMetadata).toEqual(JSON.parse(JSON.stringify(sent.metadata ?? {})));
}

async function checkCreate(who: Sender, body: Body) {
  countCase("POST /jobs");
  const res = await send(request(who, "POST", "/jobs", body));
  if (refusedForgery(who, res)) return;
  if (res.status === 201) {
    expectContractBody(creationResponse, res, 201);
    await expectStoredAsSent(who, res, body);
    return;
  }
  expectContractError(res, {
    allowed: [
      "Invalid JSON",
      "Validation error",
      "Invalid preset",
      "PRESET_NOT_ALLOWED",
      "Usage limit exceeded",
      "Conflict",
    ],
  });
}

describe("campaign: hostile input on the job routes", () => {
  it("POST /jobs: any body, Content-Type and headers → the contract's answer, never a 5xx", async () => {
    await fuzz(fc.tuple(sender, anyBody(jobDocument, BODY_LIMITS.job)), ([who, body]) => checkCreate(who, body), {
      runs: RUNS.create,
    });
  });

  it("POST /jobs: a valid URL and preset with any metadata → 201 reading back exactly as sent, or 400 naming metadata", async () => {
    const valid = fc
      .tuple(str(webUrl), metadataText)
      .map(([url, metadata]) => `{"inputUrl":${url},"preset":"mp4_264_480p","metadata":${metadata}}`)
      .filter((body) => Buffer.byteLength(body) <= BODY_LIMITS.job);
    // The enterprise caller (no quota in sight), and no Idempotency-Key (no 409 from a repeated one).
    const plain = sender.map(({ headers: { "Idempotency-Key": _, ...headers }, ...who }) => ({
      ...who,
      headers,
      caller: 2,
      authorization: undefined,
    }));
    await fuzz(
      fc.tuple(plain, valid),
      async ([who, body]) => {
        countCase("POST /jobs");
        const res = await send(request(who, "POST", "/jobs", body));
        const { metadata } = parsedAsSent(body) as { metadata: unknown };
        if (metadata === null || (isPlainObject(metadata) && !cannotStoreAsSent(metadata))) {
          expectContractBody(creationResponse, res, 201);
          await expectStoredAsSent(who, res, body);
        } else {
          expectContractError(res, { allowed: ["Validation error"] });
          const { details } = res.body as { details: { field: string }[] };
          expect(details.every((d) => d.field.startsWith("metadata"))).toBe(true);
        }
      },
      { runs: RUNS.createExact },
    );
  });

  it("GET /jobs: any query string and headers → 200 with the contract's list", async () => {
    await fuzz(
      fc.tuple(sender, queryString),
      async ([who, query]) => {
        countCase("GET /jobs");
        const res = await send(request(who, "GET", `/jobs${query}`));
        if (refusedForgery(who, res)) return;
        expectContractBody(jobList, res);
        const { jobs, pagination } = res.body as { jobs: unknown[]; pagination: { limit: number } };
        expect(jobs.length).toBeLessThanOrEqual(pagination.limit);
      },
      { runs: RUNS.list },
    );
  });

  /**
   * Whether the server saw another path than the route's: dot segments in the id (`.`, `%2e%2e`)
   * are resolved by the HTTP layer as URL parsing does, so `/jobs/./download-url` is
   * `/jobs/download-url`, and `/jobs/..` no route at all. Any contract answer is right there.
   */
  function reachedAnotherRoute(sent: string, route: string, res: Incoming): boolean {
    const seen = new URL(`/api/v1${sent.split("?")[0]}`, "http://api.test").pathname;
    const shape = route.endsWith("download-url")
      ? /^\/api\/v1\/jobs\/[^/]+\/download-url$/
      : /^\/api\/v1\/jobs\/[^/]+$/;
    if (shape.test(seen)) return false;
    expect(res.status, res.text.slice(0, 500)).toBeLessThan(500);
    if (res.status >= 400) expectContractError(res);
    return true;
  }

  const jobRoutes: [string, (id: string) => string, (res: Incoming) => void][] = [
    [
      "GET /jobs/{id}",
      (id) => `/jobs/${id}`,
      (res) =>
        res.status === 200 ? expectContractBody(jobRead, res) : expectContractError(res, { allowed: ["Not found"] }),
    ],
    [
      "DELETE /jobs/{id}",
      (id) => `/jobs/${id}`,
      (res) =>
        res.status === 200
          ? expectContractBody(cancelResponse, res)
          : expectContractError(res, { allowed: ["Not found", "Invalid operation"] }),
    ],
    [
      "GET /jobs/{id}/download-url",
      (id) => `/jobs/${id}/download-url`,
      (res) =>
        res.status === 200 ? expectContractBody(downloadUrlResponse, res) : expectContractError(res, { bare: true }),
    ],
  ];

  for (const [route, path, expectAnswer] of jobRoutes) {
    it(`${route}: any id, query string and headers → the job, or the contract's error`, async () => {
      const ids = [...ownIds.values()].flat();
      await fuzz(
        fc.tuple(sender, pathId([...ids, ...Object.values(victim.jobs)]), queryString),
        async ([who, id, query]) => {
          countCase(route);
          const sent = `${path(id)}${query}`;
          const res = await send(request(who, route.startsWith("DELETE") ? "DELETE" : "GET", sent));
          if (reachedAnotherRoute(sent, route, res) || refusedForgery(who, res)) return;
          expectAnswer(res);
          // A hostile spelling of a UUID that the route took for a job must name one of the caller's own.
          if (res.status === 200 && route !== "GET /jobs/{id}/download-url") {
            expect(ownIds.get(callers[who.caller % callers.length].accountId)).toContain(
              (res.body as { id: string }).id,
            );
          }
        },
        { runs: RUNS.jobRoute },
      );
    });
  }
});
