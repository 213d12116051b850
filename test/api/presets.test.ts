import { describe, expect, it } from "vitest";
import { expectError, expectStatus } from "../support/api-client";
import { api, newAccount } from "./harness";

describe("contract §5.8 GET /presets", () => {
  it("without a key: the free view of all 23, locked presets marked with upgradeMessage", async () => {
    const res = await api().listPresets();
    expectStatus(res, 200);
    expect(res.body.presets).toHaveLength(23);
    expect(res.body.meta).toMatchObject({ userPlan: "free", totalPresets: 23, availablePresets: 7, lockedPresets: 16 });
    expect(res.body.meta.stats).toEqual({
      total: 23,
      byCategory: { standard: 3, premium: 1, advanced: 6, streaming: 4, live: 2, social: 2, audio: 2, utility: 3 },
      byPlan: { free: 7, pro: 6, business: 6, enterprise: 4 },
      byType: { vod: 8, streaming_vod: 6, live: 2, audio: 2, utility: 3, filter: 2 },
    });
    expect(res.body.links).toEqual({ self: "/api/v1/presets", jobs: "/api/v1/jobs" });
    const hls = res.body.presets.find((p) => p.id === "hls_abr_264_standard");
    expect(hls).toMatchObject({
      category: "streaming",
      requiredPlan: "pro",
      available: false,
      upgradeMessage: expect.any(String),
    });
    expect(hls!.specifications).toEqual({ videoCodec: "libx264", audioCodec: "aac" });
    const mp4 = res.body.presets.find((p) => p.id === "mp4_264_720p");
    expect(Object.keys(mp4!).sort()).toEqual(
      ["id", "name", "category", "specifications", "estimatedProcessingTime", "requiredPlan", "available"].sort(),
    );
    expect(mp4!.specifications).toEqual({
      videoCodec: "libx264",
      audioCodec: "aac",
      resolution: "1280x720",
      maxrate: "3000k",
      crf: 23,
    });
  });

  it("with a key: the caller's plan decides; business and enterprise see only available presets", async () => {
    const expected = { free: [23, 7], pro: [23, 13], business: [19, 19], enterprise: [23, 23] } as const;
    for (const plan of ["free", "pro", "business", "enterprise"] as const) {
      const { apiKey } = await newAccount(plan);
      const res = await api(apiKey).listPresets();
      expectStatus(res, 200);
      expect(res.body.meta.userPlan).toBe(plan);
      expect(res.body.presets, plan).toHaveLength(expected[plan][0]);
      expect(res.body.meta.availablePresets, plan).toBe(expected[plan][1]);
      expect(res.body.meta.lockedPresets).toBe(23 - expected[plan][1]);
    }
  });

  it("a key that is sent but invalid is refused rather than silently ignored", async () => {
    const res = await api().listPresets({ headers: { Authorization: "Bearer spk_unknownunknownunknown" } });
    expectError(res, 401, "Unauthorized");
  });
});
