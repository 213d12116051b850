/**
 * Campaign: bodies too large, too deep or too many. Oversized bodies get 413, whether they
 * declare their length or stream it chunked; deeply nested JSON is a 400, not a 500; a timeline
 * far past its plan's limits is refused on its counts, cheaply.
 *
 * That the app stops reading at the limit is measured inside workerd (test/workerd/
 * body-limit.test.ts): over the wire, the local runner drains whatever body the Worker leaves
 * unread before it answers, as wrangler dev does (workerd would otherwise reset the next request
 * on that connection), so here a 413 comes once the whole body has been sent and discarded, and
 * a body that never ends would never be answered: these bodies are sent whole.
 */
import { Agent, request as httpRequest, type RequestOptions } from "node:http";
import { connect } from "node:net";
import { beforeAll, describe, expect, it } from "vitest";
import { signInternal } from "../../domain/internal-auth";
import { BODY_LIMITS } from "../../worker/middleware/body-limit";
import { MAX_JSON_DEPTH, MAX_JSON_CONTAINERS } from "../../worker/lib/json-limits";
import { account } from "./accounts";
import { expectStatus } from "../support/api-client";
import { type Caller, clientAs, type Outgoing, send, sendStreaming, stack } from "./client";
import {
  edlCreation,
  edlValidation,
  expectContractBody,
  expectContractError,
  creationResponse,
  uploadResponse,
} from "./contract";

let caller: Caller;
let free: Caller;

beforeAll(async () => {
  caller = await account("enterprise");
  free = await account("free");
});

const clip = (i: number) => ({ id: `c${i}`, src: "https://media.example.com/a.mp4", in: 0, out: 1, startTime: i });
const timeline = (clips: unknown[]) => ({ version: "1.0", timeline: { tracks: [{ type: "video", clips }] } });

/** `document` with `pad` spaces inside, so the body is exactly `size` bytes of valid JSON. */
function exactly(size: number, document: object): string {
  const text = JSON.stringify(document);
  if (text.length > size) throw new Error(`the document alone is ${text.length} bytes`);
  return `${text.slice(0, -1)}${" ".repeat(size - text.length)}}`;
}

interface LimitedRoute {
  name: string;
  method: string;
  path: string;
  limit: number;
  /** A body the route accepts, made exactly `size` bytes long. */
  body: (size: number) => string;
  accepted: (res: Awaited<ReturnType<typeof send>>) => void;
  headers?: (body: string) => Promise<Record<string, string>>;
}

const ROUTES: LimitedRoute[] = [
  {
    name: "POST /jobs",
    method: "POST",
    path: "/jobs",
    limit: BODY_LIMITS.job,
    body: (size) => exactly(size, { inputUrl: "https://media.example.com/a.mp4", preset: "mp4_264_720p" }),
    accepted: (res) => expectContractBody(creationResponse, res, 201),
  },
  {
    name: "PUT /edl",
    method: "PUT",
    path: "/edl",
    limit: BODY_LIMITS.timeline,
    body: (size) => exactly(size, { edl: timeline([clip(0)]) }),
    accepted: (res) => expectContractBody(edlValidation, res),
  },
  {
    name: "POST /edl",
    method: "POST",
    path: "/edl",
    limit: BODY_LIMITS.timeline,
    body: (size) => exactly(size, { edl: timeline([clip(0)]) }),
    accepted: (res) => expectContractBody(edlCreation, res, 201),
  },
  {
    name: "POST /uploads",
    method: "POST",
    path: "/uploads",
    limit: BODY_LIMITS.upload,
    body: (size) => exactly(size, { filename: "a.mp4", size: 1000 }),
    accepted: (res) => expectContractBody(uploadResponse, res, 201),
  },
  {
    name: "POST /internal/sweep",
    method: "POST",
    path: "/internal/sweep",
    limit: BODY_LIMITS.internal,
    body: (size) => exactly(size, {}),
    accepted: (res) => expect(res.status, res.text).toBe(200),
    headers: (body) => signInternal(stack.internalSecret, { method: "POST", path: "/internal/sweep", body }),
  },
];

/**
 * One request through `agent` (whose one keep-alive connection the caller shares between
 * requests): its status, and whether it went on a connection used before. Not the campaign's
 * exchange, which sends a request again when a reused connection is reset, as a client should:
 * here that reset is what is looked for.
 */
function onAgent(
  agent: Agent,
  path: string,
  options: RequestOptions,
  body?: string,
): Promise<{ status: number; reused: boolean }> {
  return new Promise((resolve, reject) => {
    const outgoing = httpRequest(new URL(path, stack.apiUrl), { ...options, agent }, (res) => {
      res.resume();
      res.on("end", () => resolve({ status: res.statusCode!, reused: outgoing.reusedSocket }));
    });
    outgoing.on("error", reject);
    outgoing.end(body);
  });
}

function expectTooLarge(res: Awaited<ReturnType<typeof send>>) {
  expectContractError(res, { allowed: ["Payload too large"] });
}

describe("campaign: request bodies over the limit get 413", () => {
  for (const route of ROUTES) {
    const base = async (body: string): Promise<Outgoing> => ({
      method: route.method,
      path: route.path,
      caller,
      headers: { "Content-Type": "application/json", ...(await route.headers?.(body)) },
    });

    it(`${route.name}: a body of exactly the limit is read; one byte more is 413, with or without Content-Length`, async () => {
      const atLimit = route.body(route.limit);
      route.accepted(await send({ ...(await base(atLimit)), body: atLimit }));
      const over = route.body(route.limit + 1);
      expectTooLarge(await send({ ...(await base(over)), body: over }));
      // Chunked: no Content-Length, so the limit is found while reading.
      for (const body of [atLimit, over]) {
        const res = await sendStreaming(await base(body), async (outgoing) => {
          for (let i = 0; i < body.length; i += 64 * 1024) outgoing.write(body.slice(i, i + 64 * 1024));
          outgoing.end();
        });
        if (body === atLimit) route.accepted(res);
        else expectTooLarge(res);
      }
    });
  }

  for (const [sent, length] of [
    ["a declared length", true],
    ["a chunked body cut off at the limit", false],
  ] as const) {
    it(`after a 413 on ${sent}, the same connection serves the next request`, async () => {
      const over = ROUTES[0].body(BODY_LIMITS.job + 1);
      const framing = length
        ? { "Content-Length": String(Buffer.byteLength(over)) }
        : { "Transfer-Encoding": "chunked" };
      const agent = new Agent({ keepAlive: true, maxSockets: 1 });
      try {
        const first = await onAgent(
          agent,
          "/api/v1/jobs",
          { method: "POST", headers: { "Content-Type": "application/json", ...framing } },
          over,
        );
        const second = await onAgent(agent, "/healthz", { method: "GET" });
        expect(first.status).toBe(413);
        expect(second).toEqual({ status: 200, reused: true });
      } finally {
        agent.destroy();
      }
    });
  }

  it("the size is judged before the key: an oversized body without one is 413 too", async () => {
    const body = ROUTES[0].body(BODY_LIMITS.job + 1);
    expectTooLarge(await send({ method: "POST", path: "/jobs", body }));
  });
});

describe("campaign: a body whose own framing is broken is a 400, never a 500", () => {
  /** The status line and body of `request` written as it is on a connection of its own. */
  function onTheWire(request: string): Promise<{ status: number; body: string }> {
    const { hostname, port } = new URL(stack.apiUrl);
    return new Promise((resolve, reject) => {
      let answer = "";
      const socket = connect(Number(port), hostname, () => socket.write(request));
      socket.on("data", (chunk) => (answer += chunk));
      socket.on("error", reject);
      socket.on("close", () =>
        resolve({ status: Number(answer.split(" ")[1]), body: answer.slice(answer.indexOf("\r\n\r\n") + 4) }),
      );
    });
  }
  const chunked = (path: string, headers: string, chunks: string) =>
    `POST ${path} HTTP/1.1\r\nHost: api\r\nConnection: close\r\n${headers}Transfer-Encoding: chunked\r\n\r\n${chunks}`;

  for (const [name, chunks] of [
    ["a chunk size that is not hex", "zz\r\n{}\r\n0\r\n\r\n"],
    ["a chunk longer than its size", '2\r\n{"a":1}\r\n0\r\n\r\n'],
  ] as const) {
    it(`POST /jobs, ${name}: 400 Invalid JSON "could not be read" (hono's bodyLimit read it uncaught: a 500)`, async () => {
      const { status, body } = await onTheWire(
        chunked("/api/v1/jobs", `Authorization: Bearer ${caller.apiKey}\r\nContent-Type: application/json\r\n`, chunks),
      );
      expect(status).toBe(400);
      expect(body).toContain('"error":"Invalid JSON"');
      expect(body).toContain("could not be read");
    });

    it(`the dashboard's sign-in form, ${name}: a 400 page`, async () => {
      const { status, body } = await onTheWire(
        chunked("/dashboard/sign-in", "Content-Type: application/x-www-form-urlencoded\r\n", chunks),
      );
      expect(status).toBe(400);
      expect(body).toContain("That form could not be read.");
    });
  }
});

describe("campaign: JSON too deep or too large to parse safely is a 400, never a 500", () => {
  const nestedArrays = (depth: number) => `${"[".repeat(depth)}${"]".repeat(depth)}`;

  for (const [method, path] of [
    ["POST", "/jobs"],
    ["PUT", "/edl"],
    ["POST", "/edl"],
  ]) {
    it(`${method} ${path}: 100,000 levels of arrays, objects and both → 400 Invalid JSON naming the depth`, async () => {
      for (const body of [
        nestedArrays(100_000),
        `${'{"a":'.repeat(100_000)}1${"}".repeat(100_000)}`,
        `{"edl":${'[{"a":'.repeat(50_000)}1${"}]".repeat(50_000)}}`,
      ]) {
        const res = await send({ method, path, caller, body });
        expectContractError(res, { allowed: ["Invalid JSON"] });
        expect((res.body as { message: string }).message).toContain(`nests deeper than ${MAX_JSON_DEPTH} levels`);
      }
    });
  }

  it(`metadata nested to the depth limit is stored; one level more is refused`, async () => {
    // The body's own object is the first level.
    const metadata = (depth: number) => `${'{"a":'.repeat(depth)}1${"}".repeat(depth)}`;
    const body = (depth: number) =>
      `{"inputUrl":"https://media.example.com/a.mp4","preset":"mp4_264_720p","metadata":${metadata(depth)}}`;
    expectContractBody(
      creationResponse,
      await send({ method: "POST", path: "/jobs", caller, body: body(MAX_JSON_DEPTH - 1) }),
      201,
    );
    expectContractError(await send({ method: "POST", path: "/jobs", caller, body: body(MAX_JSON_DEPTH) }), {
      allowed: ["Invalid JSON"],
    });
  });

  it(`4 MiB of empty objects (1.3 million) → 400, not parsed`, async () => {
    const body = `{"edl":[${Array.from({ length: 1_300_000 }, () => "{}").join(",")}]}`;
    expect(body.length).toBeLessThanOrEqual(BODY_LIMITS.timeline);
    const res = await send({ method: "PUT", path: "/edl", caller, body });
    expectContractError(res, { allowed: ["Invalid JSON"] });
    expect((res.body as { message: string }).message).toContain(
      `holds more than ${MAX_JSON_CONTAINERS} arrays and objects`,
    );
  });
});

describe("campaign: timelines far past their plan's limits are refused on their counts", () => {
  const hundredThousand = timeline(Array.from({ length: 100_000 }, () => ({})));

  it("PUT /edl: 100,000 empty clips on the free plan → valid false with the one plan-limit error", async () => {
    const res = await send({
      method: "PUT",
      path: "/edl",
      caller: free,
      body: JSON.stringify({ edl: hundredThousand }),
    });
    expectContractBody(edlValidation, res);
    expect(res.body).toMatchObject({
      valid: false,
      errors: ["Too many clips for the Starter plan: 100000 (maximum 5)"],
      stats: { clips: 100_000 },
    });
    expect(res.text.length).toBeLessThan(2000);
  });

  it("POST /edl: the same is 400 EDL validation failed with that error alone, and takes no quota", async () => {
    const res = await send({
      method: "POST",
      path: "/edl",
      caller: free,
      body: JSON.stringify({ edl: hundredThousand }),
    });
    expectContractError(res, { allowed: ["EDL validation failed"] });
    expect((res.body as { errors: string[] }).errors).toEqual([
      "Too many clips for the Starter plan: 100000 (maximum 5)",
    ]);
    const created = await clientAs(free).createJob({
      inputUrl: "https://media.example.com/a.mp4",
      preset: "mp4_264_720p",
    });
    expectStatus(created, 201);
    expect(created.body.user.remainingJobs).toBe(9);
  });

  it("100,000 empty tracks → valid false with the track-limit error alone", async () => {
    const edl = { version: "1.0", timeline: { tracks: Array.from({ length: 100_000 }, () => ({})) } };
    const res = await send({ method: "PUT", path: "/edl", caller: free, body: JSON.stringify({ edl }) });
    expect(res.body).toMatchObject({
      valid: false,
      errors: ["Too many tracks for the Starter plan: 100000 (maximum 2)"],
    });
  });
});

describe("the limits leave room for the largest real timeline", () => {
  /** 1,000 clips, 500 distinct 1,500-character signed URLs, every field set: about 3 MiB. */
  function largestEnterpriseTimeline() {
    const url = (i: number) =>
      `https://bucket.s3.eu-west-1.amazonaws.com/media/${i}.mp4?X-Amz-Signature=${"0".repeat(1400)}`;
    const clips = Array.from({ length: 1000 }, (_, i) => ({
      id: `clip-${i}`,
      src: url(i % 250),
      in: 0,
      out: 5,
      startTime: i * 5,
      speed: 1.5,
      mute: false,
      volume: -3.5,
      replaceAudio: url(250 + (i % 250)),
      transform: { scale: 1 },
      crop: { x: 0 },
      filters: ["x"],
      transition: { type: "fade" },
    }));
    const output = {
      resolution: "1920x1080",
      fps: 30,
      container: "mp4",
      videoCodec: "libx264",
      audioCodec: "aac",
      videoBitrate: "5000k",
      audioBitrate: "192k",
      preset: "veryfast",
      crf: 23,
    };
    return { version: "1.0", output, timeline: { tracks: [{ type: "video", clips }] } };
  }

  it("PUT and POST /edl accept a 1,000-clip, 500-asset Enterprise timeline of about 3 MiB", async () => {
    const body = JSON.stringify({ edl: largestEnterpriseTimeline(), metadata: { name: "largest" } });
    expect(body.length).toBeGreaterThan(2.5 * 1024 * 1024);
    const validated = await send({ method: "PUT", path: "/edl", caller, body });
    expectContractBody(edlValidation, validated);
    expect(validated.body).toMatchObject({ valid: true, stats: { clips: 1000, assets: 500 } });
    expectContractBody(edlCreation, await send({ method: "POST", path: "/edl", caller, body }), 201);
  });
});
