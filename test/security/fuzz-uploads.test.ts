/**
 * Campaign: hostile input on the upload routes (docs/uploads.md). Bodies from arbitraries.ts
 * around the three fields and their bounds, path ids and headers; the service must never answer
 * 5xx, every error must be the contract's shape, every 2xx the upload's, and a created upload
 * must read back as sent, stored as an accepted type, with its length (and a single PUT's type)
 * signed into its URLs.
 */
import { eq } from "drizzle-orm";
import fc from "fast-check";
import { beforeAll, describe, expect, it } from "vitest";
import { uploads } from "../../drizzle/schema";
import { MAX_UPLOAD_BYTES } from "../../domain/plans";
import { isUploadType, SINGLE_UPLOAD_MAX_BYTES, uploadTypeFor } from "../../domain/uploads";
import { admin } from "../api/harness";
import { BODY_LIMITS } from "../../worker/middleware/body-limit";
import { expectStatus } from "../support/api-client";
import { account, seedVictim } from "./accounts";
import {
  anyBody,
  documentOf,
  hostileKey,
  jsonText,
  parsedAsSent,
  pathId,
  queryString,
  shortHostileString,
  type Body,
  type JsonText,
} from "./arbitraries";
import { refusedForgery, requestOf, type Sender, senderOf } from "./senders";
import { type Caller, clientAs, type Incoming, send } from "./client";
import { expectContractBody, expectContractError, uploadResponse } from "./contract";
import { countCase, fuzz } from "./fuzz";

/** Cases per property. */
const RUNS = { create: 600, uploadRoute: 500 };

let callers: Caller[];
/** Each caller's uploads: a single one pending, and a multipart one with no part in. */
let ownIds: Map<string, string[]>;
let victimUploads: string[];

async function createOwnUploads(caller: Caller): Promise<string[]> {
  const ids: string[] = [];
  for (const size of [10, SINGLE_UPLOAD_MAX_BYTES + 1]) {
    const res = await clientAs(caller).createUpload({ filename: "own.mp4", size });
    expectStatus(res, 201);
    ids.push(res.body.id);
  }
  return ids;
}

beforeAll(async () => {
  const victim = await seedVictim();
  victimUploads = await createOwnUploads(victim);
  callers = [await account("free"), await account("pro")];
  ownIds = new Map(await Promise.all(callers.map(async (c) => [c.accountId, await createOwnUploads(c)] as const)));
});

const sender = senderOf(12);
/**
 * For the creations: fast-check's `freq` leaves a sender's forged Authorization out only 1 time
 * in 12, so most of the caller's own keys come from here, and the created path is reached.
 */
const creator = fc.oneof(
  { arbitrary: sender.map((who): Sender => ({ ...who, authorization: undefined })), weight: 3 },
  { arbitrary: sender, weight: 1 },
);

const request = (who: Sender, method: string, path: string, body?: Body) => requestOf(callers, who, method, path, body);

const str = (a: fc.Arbitrary<string>) => a.map((s): JsonText => JSON.stringify(s));
const GiB = 1024 * 1024 * 1024;

const filenameText = fc.oneof(
  { arbitrary: str(fc.string({ minLength: 1, maxLength: 40 })), weight: 4 },
  {
    arbitrary: str(fc.constantFrom("clip.mp4", "Logo.PNG", "talk.srt", "page.html", "movie.mkv", "noextension")),
    weight: 2,
  },
  { arbitrary: str(shortHostileString), weight: 2 },
  {
    arbitrary: str(fc.constantFrom("a/b", "..\\x", "x".repeat(255), "x".repeat(256), "", "\u202e.mp4", "\u0085")),
    weight: 1,
  },
  { arbitrary: jsonText, weight: 1 },
);
const contentTypeText = fc.oneof(
  {
    arbitrary: str(fc.constantFrom("video/mp4", "video/quicktime", "application/octet-stream", "Audio/FLAC")),
    weight: 4,
  },
  {
    arbitrary: str(
      fc.constantFrom("text/html", "image/svg+xml", "application/javascript", "text/plain", "image/gif", "text/vtt"),
    ),
    weight: 2,
  },
  {
    arbitrary: str(fc.constantFrom("video", "video/", "/mp4", "video/mp4; a=b", `video/${"x".repeat(121)}`)),
    weight: 1,
  },
  { arbitrary: str(shortHostileString), weight: 1 },
  { arbitrary: jsonText, weight: 1 },
);
const sizeText = fc.oneof(
  { arbitrary: fc.integer({ min: 1, max: 64 * 1024 * 1024 }).map(String), weight: 6 },
  {
    arbitrary: fc
      .constantFrom(
        SINGLE_UPLOAD_MAX_BYTES,
        SINGLE_UPLOAD_MAX_BYTES + 1,
        MAX_UPLOAD_BYTES.free,
        MAX_UPLOAD_BYTES.free + 1,
        5 * GiB,
        5 * GiB + 1,
        Number.MAX_SAFE_INTEGER,
      )
      .map(String),
    weight: 2,
  },
  {
    arbitrary: fc.constantFrom("0", "-1", "1.5", "1e3", "1e400", "9007199254740993", '"100"', "null", "true"),
    weight: 1,
  },
  { arbitrary: jsonText, weight: 1 },
);
const extraField = fc.tuple(
  fc.oneof(fc.constantFrom("id", "status", "key", "accountId", "uploadUrl", "partSize", "parts"), hostileKey),
  jsonText,
);

const uploadDocument: fc.Arbitrary<JsonText> = documentOf(
  {
    filename: { arbitrary: filenameText, freq: 3 },
    contentType: { arbitrary: contentTypeText, freq: 3 },
    // Nearly always there: without a size nothing is created, and the created path is fuzzed too.
    size: { arbitrary: sizeText, freq: 12 },
  },
  extraField,
);

async function checkCreate(who: Sender, body: Body) {
  countCase("POST /uploads");
  const res = await send(request(who, "POST", "/uploads", body));
  if (refusedForgery(who, res)) return;
  if (res.status !== 201) {
    expectContractError(res, { allowed: ["Invalid JSON", "Validation error", "Payload too large"] });
    return;
  }
  expectContractBody(uploadResponse, res, 201);
  const created = res.body as UploadBody;
  const sent = parsedAsSent(body) as { filename?: string; contentType?: string; size: number };
  expect(created.filename).toBe(sent.filename ?? null);
  expect(created.size).toBe(sent.size);
  expect(created.contentType).toBe(uploadTypeFor(sent.contentType, sent.filename));
  expect(isUploadType(created.contentType)).toBe(true);
  expect(created.uploadUrl === undefined).toBe(sent.size > SINGLE_UPLOAD_MAX_BYTES);
  expect(sent.size).toBeLessThanOrEqual(MAX_UPLOAD_BYTES.pro);
  const signed = [created.uploadUrl, ...(created.parts ?? []).map((p) => p.url)].filter((u) => u !== undefined);
  expect(signed.length).toBeGreaterThan(0);
  for (const url of signed)
    expect(new URL(url).searchParams.get("X-Amz-SignedHeaders")).toBe(
      url === created.uploadUrl ? "content-length;content-type;host" : "content-length;host",
    );
  const read = await send(request({ ...who, authorization: undefined }, "GET", `/uploads/${created.id}`));
  expectContractBody(uploadResponse, read);
  expect({ ...(read.body as object), inputUrl: "" }).toEqual({ ...created, inputUrl: "" });
  // Spent here, so that the campaign's creations stay under the plan's cap on open uploads.
  await admin.db.update(uploads).set({ status: "expired" }).where(eq(uploads.id, created.id));
}

interface UploadBody {
  id: string;
  filename: string | null;
  contentType: string;
  size: number;
  uploadUrl?: string;
  parts?: { url: string }[];
}

/** Whether dot segments in the id took the request to another path than the route's. */
function reachedAnotherRoute(sent: string, complete: boolean, res: Incoming): boolean {
  const seen = new URL(`/api/v1${sent.split("?")[0]}`, "http://api.test").pathname;
  const shape = complete ? /^\/api\/v1\/uploads\/[^/]+\/complete$/ : /^\/api\/v1\/uploads\/[^/]+$/;
  if (shape.test(seen)) return false;
  expect(res.status, res.text.slice(0, 500)).toBeLessThan(500);
  if (res.status >= 400) expectContractError(res);
  return true;
}

describe("campaign: hostile input on the upload routes", () => {
  it("POST /uploads: any body, Content-Type and headers → the contract's answer, never a 5xx", async () => {
    await fuzz(
      fc.tuple(creator, anyBody(uploadDocument, BODY_LIMITS.upload)),
      ([who, body]) => checkCreate(who, body),
      {
        runs: RUNS.create,
      },
    );
  });

  for (const complete of [false, true]) {
    const route = complete ? "POST /uploads/{id}/complete" : "GET /uploads/{id}";
    it(`${route}: any id, query string and headers → the caller's own upload, or the contract's error`, async () => {
      const ids = [...ownIds.values()].flat();
      await fuzz(
        fc.tuple(sender, pathId([...ids, ...victimUploads]), queryString),
        async ([who, id, query]) => {
          countCase(route);
          const sent = `/uploads/${id}${complete ? "/complete" : ""}${query}`;
          const res = await send(request(who, complete ? "POST" : "GET", sent));
          if (reachedAnotherRoute(sent, complete, res) || refusedForgery(who, res)) return;
          if (res.status !== 200) {
            expectContractError(res, { allowed: complete ? ["Not found", "Conflict"] : ["Not found"] });
            if (res.status === 409)
              expect(ownIds.get(callers[who.caller % callers.length].accountId)).toContain(id.toLowerCase());
            return;
          }
          expectContractBody(uploadResponse, res);
          expect(ownIds.get(callers[who.caller % callers.length].accountId)).toContain((res.body as { id: string }).id);
        },
        { runs: RUNS.uploadRoute },
      );
    });
  }
});
