import { describe, expect, it } from "vitest";
import { PRESET_IDS } from "../../domain/presets/catalogue";
import { bodyOf, expectError, expectStatus, rawBody, unchecked } from "../support/api-client";
import { admin, api, ISO_MS, newAccount, SOURCE, UUID } from "./harness";

describe("contract §5.1 POST /jobs › 201 creation response", () => {
  it("returns every field of the creation response, queued, with the account's webhook echoed", async () => {
    const { accountId, apiKey } = await newAccount("free");
    await admin.setWebhook(accountId, "https://hooks.example.com/video");
    const res = await api(apiKey).createJob({ inputUrl: SOURCE, preset: "mp4_264_720p", metadata: { orderId: 42 } });
    expectStatus(res, 201);
    const b = res.body;
    expect(Object.keys(b).sort()).toEqual(
      [
        "id",
        "status",
        "preset",
        "inputUrl",
        "webhookUrl",
        "createdAt",
        "estimatedProcessingTime",
        "links",
        "user",
      ].sort(),
    );
    expect(b.id).toMatch(UUID);
    expect(b.status).toBe("queued");
    expect(b.preset).toBe("mp4_264_720p");
    expect(b.inputUrl).toBe(SOURCE);
    expect(b.webhookUrl).toBe("https://hooks.example.com/video");
    expect(b.createdAt).toMatch(ISO_MS);
    expect(typeof b.estimatedProcessingTime).toBe("string");
    expect(b.links).toEqual({ self: `/api/v1/jobs/${b.id}`, cancel: `/api/v1/jobs/${b.id}` });
    expect(b.user).toEqual({ remainingJobs: 9, plan: "Starter" });
  });

  it("echoes webhookUrl null when none is configured, and ignores a webhookUrl sent in the body", async () => {
    const { apiKey } = await newAccount("pro");
    const res = await api(apiKey).createJob(
      unchecked({
        inputUrl: SOURCE,
        preset: "mp4_264_1080p",
        webhookUrl: "https://attacker.example/hook",
        extra: true,
      }),
    );
    expectStatus(res, 201);
    expect(res.body.webhookUrl).toBeNull();
    expect(res.body.user).toEqual({ remainingJobs: 999, plan: "Indie/Pro" });
  });

  it("stores the caller's metadata and returns it on read as clientMetadata", async () => {
    const { apiKey } = await newAccount();
    const created = await api(apiKey).createJob({
      inputUrl: SOURCE,
      preset: "mp4_264_240p",
      metadata: { a: 1, b: "x" },
    });
    expectStatus(created, 201);
    const read = await api(apiKey).getJob(created.body.id);
    expectStatus(read, 200);
    expect(read.body.clientMetadata).toEqual({ a: 1, b: "x" });
  });
});

describe("contract §8.1 Errors › 400 on POST /jobs", () => {
  it("malformed JSON → 400 Invalid JSON", async () => {
    const { apiKey } = await newAccount();
    for (const text of ["{not json", "", '{"inputUrl": ']) {
      const res = await api(apiKey).createJob(rawBody(text));
      expectError(res, 400, "Invalid JSON");
      expect(typeof res.body.message).toBe("string");
    }
  });

  it("missing inputUrl and preset → Validation error with details 'Invalid input'", async () => {
    const { apiKey } = await newAccount();
    const res = await api(apiKey).createJob(unchecked({}));
    expectError(res, 400, "Validation error");
    expect(res.body).toMatchObject({ error: "Validation error", message: "Invalid request parameters" });
    expect(res.body.details).toEqual(
      expect.arrayContaining([
        { field: "inputUrl", message: "Invalid input" },
        { field: "preset", message: "Invalid input" },
      ]),
    );
  });

  it("a value that is not an absolute http(s) URL → 'Invalid input URL'", async () => {
    const { apiKey } = await newAccount();
    // With a user name or password, which the encoder refuses (a unit taken for a job bound to fail);
    // with an unpaired surrogate, which the URL parser turns into U+FFFD and Postgres cannot store.
    for (const inputUrl of [
      "not a url",
      "/relative/path.mp4",
      "ftp://host/file.mp4",
      "file:///etc/passwd",
      42,
      "https://user:pw@media.example.com/a.mp4",
      "https://media.example.com/a\ud800.mp4",
    ]) {
      const res = await api(apiKey).createJob(unchecked({ inputUrl, preset: "mp4_264_720p" }));
      expectError(res, 400, "Validation error", String(inputUrl));
      expect(res.body.details).toEqual([{ field: "inputUrl", message: "Invalid input URL" }]);
    }
  });

  it("metadata that is not an object → Validation error naming it", async () => {
    const { apiKey } = await newAccount();
    for (const metadata of ["text", 5, [1, 2]]) {
      const res = await api(apiKey).createJob(unchecked({ inputUrl: SOURCE, preset: "mp4_264_720p", metadata }));
      expectError(res, 400, "Validation error", JSON.stringify(metadata));
      expect(res.body.details).toEqual([{ field: "metadata", message: expect.any(String) }]);
    }
    const withNull = await api(apiKey).createJob({ inputUrl: SOURCE, preset: "mp4_264_720p", metadata: null });
    expectStatus(withNull, 201);
  });

  it("a number beyond JSON's range (1e400 reads as Infinity, stored as null) → Validation error naming the field, nothing stored", async () => {
    const { apiKey } = await newAccount();
    const text = `{"inputUrl":"${SOURCE}","preset":"mp4_264_720p","metadata":{"fine":1e300,"big":1e400,"list":[-1e999]}}`;
    const res = await api(apiKey).createJob(rawBody(text));
    expectError(res, 400, "Validation error");
    expect(res.body.details.map((d) => d.field)).toEqual(["metadata.big", "metadata.list[0]"]);
    expect(res.body.details[0].message).toContain("1e400 reads as Infinity");
    expect(bodyOf(await api(apiKey).listJobs(), 200).jobs).toEqual([]);
  });

  it("text Postgres cannot store (U+0000) → Validation error naming the field, never a 500", async () => {
    const { apiKey } = await newAccount();
    const res = await api(apiKey).createJob({
      inputUrl: SOURCE,
      preset: "mp4_264_720p",
      metadata: { ok: "fine", tags: ["a", "b\u0000c"], "k\u0000": 1 },
    });
    expectError(res, 400, "Validation error");
    expect(res.body).toMatchObject({ error: "Validation error", message: "Invalid request parameters" });
    expect(res.body.details.map((d) => d.field).sort()).toEqual(["metadata.k\u0000", "metadata.tags[1]"]);
    for (const inputUrl of [
      `${SOURCE}\u0000`,
      "https://media.example.com/a b.mp4",
      " https://media.example.com/a.mp4",
    ]) {
      const bad = await api(apiKey).createJob({ inputUrl, preset: "mp4_264_720p" });
      expectError(bad, 400, "Validation error", JSON.stringify(inputUrl));
      expect(bad.body.details).toEqual([{ field: "inputUrl", message: "Invalid input URL" }]);
    }
    const ok = await api(apiKey).createJob({ inputUrl: SOURCE, preset: "mp4_264_720p" });
    expectStatus(ok, 201);
    expect(ok.body.user.remainingJobs).toBe(9);
  });

  it("a body that is not an object → Validation error, never a 500", async () => {
    const { apiKey } = await newAccount();
    for (const body of [null, [], "string", 5]) {
      const res = await api(apiKey).createJob(unchecked(body));
      expectError(res, 400, "Validation error");
    }
  });

  it("unknown preset → Invalid preset listing every preset the service knows", async () => {
    const { apiKey } = await newAccount();
    const res = await api(apiKey).createJob({ inputUrl: SOURCE, preset: "mp4_999" });
    expectError(res, 400, "Invalid preset");
    expect(res.body.availablePresets).toEqual(PRESET_IDS);
    expect(res.body.availablePresets).toHaveLength(23);
  });

  it("a validation failure takes no quota unit", async () => {
    const { apiKey } = await newAccount();
    await api(apiKey).createJob({ inputUrl: "nope", preset: "mp4_264_720p" });
    await api(apiKey).createJob({ inputUrl: SOURCE, preset: "nope" });
    const ok = await api(apiKey).createJob({ inputUrl: SOURCE, preset: "mp4_264_720p" });
    expectStatus(ok, 201);
    expect(ok.body.user.remainingJobs).toBe(9);
  });
});

describe("contract §8.1 Errors › 403 PRESET_NOT_ALLOWED", () => {
  it("a preset above the plan → 403 with code, the plan's presets, requiredPlan, yourPlan and display name", async () => {
    const { apiKey } = await newAccount("free");
    const res = await api(apiKey).createJob({ inputUrl: SOURCE, preset: "hls_abr_264_standard" });
    expectError(res, 403, "PRESET_NOT_ALLOWED");
    expect(res.body.code).toBe("PRESET_NOT_ALLOWED");
    expect(res.body.requiredPlan).toBe("pro");
    expect(res.body.yourPlan).toBe("free");
    expect(res.body.message).toContain("Starter");
    expect(res.body.upgradeMessage).toMatch(/Indie\/Pro.*hls_abr_264_standard/);
    expect(Object.keys(res.body).sort()).toEqual([
      "availablePresets",
      "code",
      "error",
      "message",
      "requiredPlan",
      "upgradeMessage",
      "yourPlan",
    ]);
    expect([...res.body.availablePresets].sort()).toEqual(
      [
        "mp4_264_240p",
        "mp4_264_480p",
        "mp4_264_720p",
        "hls_abr_264_basic",
        "audio_aac_podcast",
        "util_thumbnails",
        "util_subs_sidecar_basic",
      ].sort(),
    );
  });

  it("enterprise-only presets are refused to business with requiredPlan enterprise", async () => {
    const { apiKey } = await newAccount("business");
    const res = await api(apiKey).createJob({ inputUrl: SOURCE, preset: "hls_abr_265_efficient_4k" });
    expectStatus(res, 403);
    expect(res.body).toMatchObject({ requiredPlan: "enterprise", yourPlan: "business" });
    expect(res.body.availablePresets).toHaveLength(19);
  });
});
