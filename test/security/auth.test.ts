/**
 * Campaign: authentication and isolation. Every public route refuses every kind of bad
 * credential with the one 401 body; every job route answers another account's job with a 404
 * and leaves it as it was. Every response is scanned for leaks by the client (client.ts).
 */
import { beforeAll, describe, expect, it } from "vitest";
import { generateApiKey } from "../../domain/keys";
import { admin } from "../api/harness";
import { account, seedVictim, VICTIM_STATES, type Victim } from "./accounts";
import { bodyOf, expectStatus } from "../support/api-client";
import { type Caller, clientAs, type Incoming, type Outgoing, send, sendAll } from "./client";
import { expectContractBody, expectContractError, jobList, jobRead, UNAUTHORIZED } from "./contract";

interface Route {
  method: string;
  path: (jobId: string) => string;
  body?: string;
  /** Its own errors are bare `{message}` bodies (download-url). */
  bare?: boolean;
}

const JOB_BODY = JSON.stringify({ inputUrl: "https://media.example.com/a.mp4", preset: "mp4_264_720p" });
const EDL = {
  version: "1.0",
  timeline: {
    tracks: [
      { type: "video", clips: [{ id: "a", src: "https://media.example.com/a.mp4", in: 0, out: 1, startTime: 0 }] },
    ],
  },
};

const JOB_ROUTES: Route[] = [
  { method: "GET", path: (id) => `/jobs/${id}` },
  { method: "DELETE", path: (id) => `/jobs/${id}` },
  { method: "GET", path: (id) => `/jobs/${id}/download-url`, bare: true },
];

/** The 11 public endpoints, with a body that would succeed for a valid key. */
const ROUTES: Route[] = [
  { method: "POST", path: () => "/jobs", body: JOB_BODY },
  { method: "GET", path: () => "/jobs" },
  ...JOB_ROUTES,
  { method: "POST", path: () => "/edl", body: JSON.stringify({ edl: EDL }) },
  { method: "PUT", path: () => "/edl", body: JSON.stringify({ edl: EDL }) },
  { method: "POST", path: () => "/uploads", body: JSON.stringify({ filename: "a.mp4", size: 1000 }) },
  { method: "GET", path: (id) => `/uploads/${id}` },
  { method: "POST", path: (id) => `/uploads/${id}/complete` },
  // A key is optional here, but one that is sent must be valid (docs/decisions.md).
  { method: "GET", path: () => "/presets" },
];

/** The UTF-8 bytes of `text` as the Latin-1 string node:http puts on the wire byte for byte. */
const utf8Bytes = (text: string) => Buffer.from(text, "utf8").toString("latin1");

/** Every way the header can be wrong, given a live key (so only the form is at fault). */
function badAuthorizations(live: string, revoked: string[]): [string, string | string[] | undefined][] {
  const body = live.slice(live.indexOf("_") + 1);
  return [
    ["no header", undefined],
    ["empty value", ""],
    ["scheme only", "Bearer"],
    ["scheme and a space", "Bearer "],
    ["lower-case scheme", `bearer ${live}`],
    ["upper-case scheme", `BEARER ${live}`],
    ["no scheme", live],
    ["Basic with the key", `Basic ${live}`],
    ["Basic credentials", `Basic ${Buffer.from(`${live}:`).toString("base64")}`],
    ["Token scheme", `Token ${live}`],
    ["scheme glued on", `Bearer${live}`],
    ["scheme with =", `Bearer=${live}`],
    ["two spaces", `Bearer  ${live}`],
    ["a tab", `Bearer\t${live}`],
    ["space inside the key", `Bearer ${live.slice(0, 10)} ${live.slice(10)}`],
    ["quoted key", `Bearer "${live}"`],
    ["trailing semicolon", `Bearer ${live};`],
    ["two keys", `Bearer ${live} ${live}`],
    ["two keys, comma", `Bearer ${live}, Bearer ${live}`],
    ["two Authorization headers", [`Bearer ${live}`, `Bearer ${live}`]],
    ["one character more", `Bearer ${live}x`],
    ["one character less", `Bearer ${live.slice(0, -1)}`],
    ["very long key", `Bearer spk_${"A".repeat(6000)}`],
    ["very long value", `Bearer ${live}${"x".repeat(6000)}`],
    ["non-ASCII key", `Bearer ${utf8Bytes(`spk_${"ключ".repeat(11)}`)}`],
    ["non-ASCII letter in a live key", `Bearer ${live.slice(0, -1)}${utf8Bytes("é")}`],
    ["Latin-1 byte in a live key", `Bearer ${live.slice(0, -1)}\u00e9`],
    ["homoglyph prefix", `Bearer ${utf8Bytes("ѕpk_")}${body}`],
    ["percent-encoded key", `Bearer ${encodeURIComponent(live).replace("_", "%5F")}`],
    ["prefix pk_", `Bearer pk_${body}`],
    ["prefix SPK_", `Bearer SPK_${body}`],
    ["prefix spk-", `Bearer spk-${body}`],
    ["prefix sk-", `Bearer sk-${body}`],
    ["prefix rk_", `Bearer rk_${body}`],
    ["prefix only", "Bearer spk_"],
    ["unknown spk_ key", `Bearer ${generateApiKey("spk_")}`],
    ["unknown sk_ key", `Bearer ${generateApiKey("sk_")}`],
    ["another account's key body under the other prefix", `Bearer ${live.startsWith("spk_") ? "sk_" : "spk_"}${body}`],
    ...revoked.map((key, i): [string, string] => [`revoked key ${i + 1}`, `Bearer ${key}`]),
  ];
}

function expectUnauthorized(res: Incoming, name: string) {
  expect(res.status, name).toBe(401);
  expect(res.body, name).toEqual(UNAUTHORIZED);
  expectContractError(res, { allowed: ["Unauthorized"] });
}

describe("campaign: every route × every bad credential gives the contract's 401", () => {
  let victim: Victim;
  let cases: [string, string | string[] | undefined][];

  beforeAll(async () => {
    victim = await seedVictim();
    const revokedModern = await admin.createKey(victim.accountId);
    const revokedLegacy = await admin.createKey(victim.accountId, true);
    // Used once before revocation, so a cached lookup would be what answers if revocation failed to reach it.
    for (const key of [revokedModern, revokedLegacy])
      expect((await send({ method: "GET", path: "/jobs", caller: { ...victim, apiKey: key.apiKey } })).status).toBe(
        200,
      );
    await admin.revokeKey(revokedModern.apiKey);
    await admin.revokeKey(revokedLegacy.keyId);
    cases = badAuthorizations(victim.apiKey, [revokedModern.apiKey, revokedLegacy.apiKey]);
  });

  for (const route of ROUTES) {
    const name = `${route.method} ${route.path(":id")}`;
    it(`${name}: ${route.path(":id") === "/presets" ? "every bad header (none is fine here)" : "no header and every bad one"}`, async () => {
      // On /presets no header, or an empty one, is the free view, not a 401
      // (test/workerd/auth-header.test.ts).
      const applicable =
        route.path("") === "/presets" ? cases.filter(([, header]) => header !== undefined && header !== "") : cases;
      const requests: Outgoing[] = applicable.map(([, authorization]) => ({
        method: route.method,
        path: route.path(victim.jobs.queued),
        headers: {
          "Content-Type": "application/json",
          ...(authorization === undefined ? {} : { Authorization: authorization }),
        },
        body: route.body,
      }));
      const responses = await sendAll(requests);
      responses.forEach((res, i) => {
        expectUnauthorized(res, `${name}: ${applicable[i][0]}`);
      });
    });
  }

  it("the refused DELETEs left the victim's queued job queued, and the refused POSTs created nothing", async () => {
    expect(bodyOf(await clientAs(victim).getJob(victim.jobs.queued), 200).status).toBe("queued");
    expect(bodyOf(await clientAs(victim).listJobs({ limit: 100 }), 200).pagination.totalCount).toBe(
      VICTIM_STATES.length,
    );
  });

  it("GET /presets with no header at all is the free view, not a 401", async () => {
    const res = await clientAs().listPresets();
    expectStatus(res, 200);
    expect(res.body.meta.userPlan).toBe("free");
  });
});

describe("campaign: another account's jobs are 404 on every job route and stay as they were", () => {
  let victim: Victim;
  let attacker: Caller;
  let before: Map<string, unknown>;

  /** What the owner sees of a job, without the parts signed afresh on every read. */
  async function ownerView(id: string) {
    const res = await clientAs(victim).getJob(id);
    expectContractBody(jobRead, res);
    expectStatus(res, 200);
    const { outputUrl, expiration, ...rest } = res.body;
    return { ...rest, signed: outputUrl !== null && expiration !== null };
  }

  beforeAll(async () => {
    victim = await seedVictim();
    attacker = await account("enterprise");
    before = new Map(
      await Promise.all(VICTIM_STATES.map(async (s) => [victim.jobs[s], await ownerView(victim.jobs[s])] as const)),
    );
  });

  /** The victim's ids as sent, and spelled the other ways that name the same row. */
  const spellings = (id: string) => [
    id,
    id.toUpperCase(),
    id.replace(/[a-f]/, (c) => `%${c.charCodeAt(0).toString(16)}`),
  ];

  for (const route of JOB_ROUTES) {
    it(`${route.method} ${route.path(":id")} with each of the victim's jobs, in every state and spelling → 404`, async () => {
      const requests = VICTIM_STATES.flatMap((state) =>
        spellings(victim.jobs[state]).map(
          (id): Outgoing => ({ method: route.method, path: route.path(id), caller: attacker }),
        ),
      );
      for (const res of await sendAll(requests)) {
        expect(res.status, res.text).toBe(404);
        expectContractError(res, { bare: route.bare, allowed: ["Not found"] });
      }
    });
  }

  it("the victim's jobs are unchanged: the cancel attempts cancelled nothing", async () => {
    for (const state of VICTIM_STATES) {
      expect(await ownerView(victim.jobs[state]), state).toEqual(before.get(victim.jobs[state]));
    }
  });

  it("the victim's jobs reach the owner as before: signed output for the completed one, 410 for the legacy one", async () => {
    const signed = await send({ method: "GET", path: `/jobs/${victim.jobs.completed}/download-url`, caller: victim });
    expect(signed.status).toBe(200);
    const legacy = await send({ method: "GET", path: `/jobs/${victim.jobs.legacy}/download-url`, caller: victim });
    expect(legacy.status).toBe(410);
  });

  it("the attacker's list shows its own job and none of the victim's, whatever the filters", async () => {
    const own = await send({ method: "POST", path: "/jobs", caller: attacker, body: JOB_BODY });
    expect(own.status).toBe(201);
    const filters = [
      "",
      "status=queued",
      "status=completed",
      "status=failed",
      "status=cancelled",
      "status=processing",
      "preset=mp4_264_720p",
      "preset=edl_custom",
      "page=2&limit=1",
    ];
    for (const res of await sendAll(
      filters.map((q) => ({ method: "GET", path: `/jobs?limit=100&${q}`, caller: attacker })),
    )) {
      expectContractBody(jobList, res);
      const ids = (res.body as { jobs: { id: string }[] }).jobs.map((j) => j.id);
      expect(ids.every((id) => id === (own.body as { id: string }).id)).toBe(true);
    }
  });

  it("the same Idempotency-Key and body from two accounts make two jobs: replays are per account", async () => {
    const headers = { "Idempotency-Key": `shared-${victim.marker}` };
    const first = await send({ method: "POST", path: "/jobs", caller: victim, headers, body: JOB_BODY });
    expect(first.status).toBe(201);
    const second = await send({ method: "POST", path: "/jobs", caller: attacker, headers, body: JOB_BODY });
    expect(second.status).toBe(201);
    expect(second.headers.get("idempotent-replayed")).toBeNull();
    expect((second.body as { id: string }).id).not.toBe((first.body as { id: string }).id);
  });
});
