import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { EdlDocument } from "../../client/types";
import type { components } from "../../client/generated/openapi";
import { bodyOf, expectError, expectStatus, rawBody, unchecked } from "../support/api-client";
import { api, ISO_MS, newAccount, UUID } from "./harness";

type EdlVideoClip = components["schemas"]["EdlVideoClip"];

const SRC = "https://media.example.com/a.mp4";
const timeline = (clips = 1, extra: Partial<EdlVideoClip> = {}): EdlDocument => ({
  version: "1.0",
  timeline: {
    tracks: [
      {
        type: "video",
        clips: Array.from({ length: clips }, (_, i) => ({
          id: `c${i}`,
          src: SRC,
          in: 0,
          out: 4,
          startTime: i * 4,
          ...extra,
        })),
      },
    ],
  },
});

describe("contract §5.7 PUT /edl › validate", () => {
  it("a valid timeline: valid true, errors and warnings omitted, stats, estimate and plan", async () => {
    const { apiKey } = await newAccount("free");
    const res = await api(apiKey).validateEdl({ edl: timeline(2) });
    expectStatus(res, 200);
    expect(res.body.valid).toBe(true);
    expect("errors" in res.body).toBe(false);
    expect("warnings" in res.body).toBe(false);
    expect(res.body.stats).toMatchObject({
      clips: 2,
      duration: 8,
      tracks: 1,
      assets: 1,
      complexity: "simple",
      features: [],
    });
    expect(res.body.estimate).toEqual({ processingTime: expect.any(String), complexity: "simple" });
    expect(res.body.plan).toEqual({ current: "free", canProcess: true });
  });

  it("an invalid timeline is still 200: valid false with error strings", async () => {
    const { apiKey } = await newAccount("free");
    const bad = timeline(1);
    (bad.timeline.tracks[0].clips[0] as Record<string, unknown>).out = -1;
    const res = await api(apiKey).validateEdl({ edl: bad });
    expectStatus(res, 200);
    expect(res.body.valid).toBe(false);
    expect(res.body.errors!.some((e) => e.includes("timeline.tracks[0].clips[0]"))).toBe(true);
    expect(res.body.plan).toEqual({ current: "free", canProcess: false });
  });

  it("plan limits: six clips are too many for Starter but fine for Indie/Pro", async () => {
    const free = await newAccount("free");
    const pro = await newAccount("pro");
    const onFree = await api(free.apiKey).validateEdl({ edl: timeline(6) });
    expectStatus(onFree, 200);
    expect(onFree.body.valid).toBe(false);
    expect(onFree.body.errors!.join(" ")).toMatch(/clips/i);
    expect(onFree.body.plan.canProcess).toBe(false);
    const onPro = await api(pro.apiKey).validateEdl({ edl: timeline(6) });
    expectStatus(onPro, 200);
    expect(onPro.body.valid).toBe(true);
    expect(onPro.body.plan).toEqual({ current: "pro", canProcess: true });
  });

  it("accepted-but-not-applied properties pass, appear in stats.features and in a warning", async () => {
    const { apiKey } = await newAccount("free");
    const res = await api(apiKey).validateEdl({ edl: timeline(1, { transform: { rotate: 90 }, crop: {} }) });
    expectStatus(res, 200);
    expect(res.body.valid).toBe(true);
    expect(res.body.stats.features).toEqual(["transform", "crop"]);
    expect(res.body.warnings!.join(" ")).toMatch(/transform.*crop/);
  });

  it("never touches the quota", async () => {
    const { apiKey } = await newAccount("free");
    for (let i = 0; i < 12; i++) await api(apiKey).validateEdl({ edl: timeline(1) });
    const job = await api(apiKey).createJob({ inputUrl: SRC, preset: "mp4_264_720p" });
    expectStatus(job, 201);
    expect(job.body.user.remainingJobs).toBe(9);
  });

  it("a body without edl is a Validation error; malformed JSON is Invalid JSON", async () => {
    const { apiKey } = await newAccount("free");
    const missing = await api(apiKey).validateEdl(unchecked({}));
    expectStatus(missing, 400);
    expect(missing.body).toMatchObject({
      error: "Validation error",
      details: [{ field: "edl", message: "Invalid input" }],
    });
    const broken = await api(apiKey).validateEdl(rawBody("{"));
    expect((broken.body as { error?: string }).error).toBe("Invalid JSON");
  });

  it("there is no /edl/validate path", async () => {
    const { apiKey } = await newAccount("free");
    const res = await api(apiKey).raw({ method: "POST", path: "/edl/validate", json: { edl: timeline(1) } });
    expectStatus(res, 404);
  });
});

describe("contract §5.6 POST /edl › create", () => {
  it("201 with type edl, stats, estimate, links and user; one unit however many clips; read as an edl_custom job", async () => {
    const { apiKey } = await newAccount("free");
    const res = await api(apiKey).createEdlJob({
      edl: timeline(5),
      metadata: { name: "Promo", description: "five clips" },
    });
    expectStatus(res, 201);
    expect(Object.keys(res.body).sort()).toEqual([
      "createdAt",
      "estimate",
      "id",
      "links",
      "stats",
      "status",
      "type",
      "user",
      "webhookUrl",
    ]);
    expect(res.body).toMatchObject({ status: "queued", type: "edl", webhookUrl: null });
    expect(res.body.id).toMatch(UUID);
    expect(res.body.createdAt).toMatch(ISO_MS);
    expect(res.body.stats).toEqual({ clips: 5, duration: 20, tracks: 1, complexity: expect.any(String) });
    expect(res.body.user).toEqual({ remainingJobs: 9, plan: "Starter" });
    expect(res.body.links).toEqual({ self: `/api/v1/jobs/${res.body.id}`, cancel: `/api/v1/jobs/${res.body.id}` });
    const read = await api(apiKey).getJob(res.body.id);
    expectStatus(read, 200);
    expect(read.body).toMatchObject({ status: "queued", preset: "edl_custom", inputUrl: SRC });
    expect(read.body.clientMetadata).toEqual({ name: "Promo", description: "five clips" });
    const cancel = await api(apiKey).cancelJob(res.body.id);
    expectStatus(cancel, 200);
    expect(cancel.body.status).toBe("cancelled");
  });

  it("metadata null is no metadata, as on POST /jobs", async () => {
    const { apiKey } = await newAccount("free");
    const res = await api(apiKey).createEdlJob({ edl: timeline(1), metadata: null });
    expectStatus(res, 201);
    const read = await api(apiKey).getJob(res.body.id);
    expectStatus(read, 200);
    expect(read.body.clientMetadata).toEqual({});
  });

  it("metadata's name and description may be null, as any optional field, and read back as sent; another type is refused, naming the field", async () => {
    const { apiKey } = await newAccount("free");
    const res = await api(apiKey).createEdlJob(
      unchecked({ edl: timeline(1), metadata: { name: null, description: null, campaign: 7 } }),
    );
    expectStatus(res, 201);
    const read = await api(apiKey).getJob(res.body.id);
    expect(bodyOf(read, 200).clientMetadata).toEqual({ name: null, description: null, campaign: 7 });
    const refused = await api(apiKey).createEdlJob(unchecked({ edl: timeline(1), metadata: { name: 7 } }));
    expectError(refused, 400, "Validation error");
    expect(refused.body.details).toEqual([{ field: "metadata.name", message: "Expected a string" }]);
  });

  it("warnings appear only when there are some (overlapping clips)", async () => {
    const { apiKey } = await newAccount("pro");
    const overlapping = timeline(2);
    (overlapping.timeline.tracks[0].clips[1] as EdlVideoClip).startTime = 1;
    const res = await api(apiKey).createEdlJob({ edl: overlapping });
    expectStatus(res, 201);
    expect(res.body.warnings!.join(" ")).toMatch(/overlap/i);
  });

  it("an invalid timeline → 400 EDL validation failed with errors, and no quota unit taken", async () => {
    const { apiKey } = await newAccount("free");
    const res = await api(apiKey).createEdlJob(unchecked({ edl: { version: "2.0", timeline: {} } }));
    expectError(res, 400, "EDL validation failed");
    expect(res.body).toMatchObject({ error: "EDL validation failed", message: expect.any(String) });
    expect(res.body.errors.length).toBeGreaterThan(0);
    const ok = await api(apiKey).createEdlJob({ edl: timeline(1) });
    expectStatus(ok, 201);
    expect(ok.body.user.remainingJobs).toBe(9);
  });
});

describe("contract §5.6 and §5.7 PUT and POST /edl › text Postgres cannot store", () => {
  it("U+0000 anywhere in the document is an error naming the field for both, never a 500", async () => {
    const { apiKey } = await newAccount("free");
    const edl = timeline(1);
    (edl.timeline.tracks[0].clips[0] as Record<string, unknown>).note = "a\u0000b";
    const put = await api(apiKey).validateEdl({ edl });
    expectStatus(put, 200);
    expect(put.body.valid).toBe(false);
    expect(put.body.errors).toContain(
      "timeline.tracks[0].clips[0].note: must not contain NUL (\\u0000) or unpaired surrogate characters",
    );
    const post = await api(apiKey).createEdlJob({ edl });
    expectError(post, 400, "EDL validation failed");
    const meta = await api(apiKey).createEdlJob({ edl: timeline(1), metadata: { name: "x\u0000" } });
    expectError(meta, 400, "Validation error");
    expect(meta.body.details).toEqual([
      { field: "metadata.name", message: "must not contain NUL (\\u0000) or unpaired surrogate characters" },
    ]);
    const ok = await api(apiKey).createEdlJob({ edl: timeline(1) });
    expectStatus(ok, 201);
    expect(ok.body.user.remainingJobs).toBe(9);
  });
});

describe("property: any JSON a client sends gets 200 from PUT and 201/400 from POST, and they agree", () => {
  it("holds for arbitrary JSON and for mutated timelines", async () => {
    const { apiKey } = await newAccount("enterprise");
    const mutated = fc.record({
      version: fc.oneof(fc.constant("1.0"), fc.jsonValue()),
      output: fc.option(
        fc.dictionary(fc.constantFrom("resolution", "fps", "container", "videoCodec", "crf", "preset"), fc.jsonValue()),
        { nil: undefined },
      ),
      timeline: fc.record({
        tracks: fc.array(
          fc.record({
            type: fc.constantFrom("video", "overlay", "text", "audio", 3),
            clips: fc.array(
              fc.dictionary(
                fc.constantFrom(
                  "id",
                  "src",
                  "in",
                  "out",
                  "startTime",
                  "duration",
                  "speed",
                  "volume",
                  "text",
                  "opacity",
                  "transform",
                ),
                fc.oneof(
                  fc.integer({ min: -5, max: 50 }),
                  fc.constant(SRC),
                  fc.string({ unit: "binary" }),
                  fc.jsonValue(),
                ),
              ),
              { maxLength: 3 },
            ),
          }),
          { maxLength: 3 },
        ),
      }),
    });
    await fc.assert(
      // Strings of any code unit, NUL and lone surrogates included, not only printable ones.
      fc.asyncProperty(fc.oneof(fc.jsonValue(), fc.jsonValue({ stringUnit: "binary" }), mutated), async (edl) => {
        const put = await api(apiKey).validateEdl(unchecked({ edl }));
        expectStatus(put, 200);
        const post = await api(apiKey).createEdlJob(unchecked({ edl }));
        expect([201, 400]).toContain(post.status);
        expect(post.status === 201).toBe(put.body.valid);
        if (post.status === 201) await api(apiKey).cancelJob(post.body.id);
      }),
      { numRuns: 60 },
    );
  });
});
