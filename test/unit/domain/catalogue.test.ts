import { describe, expect, it } from "vitest";
import { PRESETS, findPreset } from "../../../domain/presets/catalogue";
import { PRESET_CATEGORIES } from "../../../domain/presets/definitions";
import { presentPreset, presetCatalogueView } from "../../../domain/presets/view";
import { PLAN_IDS, planIncludes } from "../../../domain/plans";
import golden from "./catalogue.golden.json";

const count = <T>(items: readonly T[], pred: (t: T) => boolean) => items.filter(pred).length;

describe("contract §3.8 The catalogue › facts, recomputed from the catalogue", () => {
  it("has 23 presets with unique identifiers", () => {
    expect(PRESETS).toHaveLength(23);
    expect(new Set(PRESETS.map((p) => p.id)).size).toBe(23);
  });

  it("includes every identifier the contract names", () => {
    for (const id of [
      "mp4_264_240p",
      "mp4_264_480p",
      "mp4_264_720p",
      "mp4_264_1080p",
      "mp4_265_1080p_efficient",
      "hls_abr_264_basic",
      "hls_abr_264_standard",
      "hls_abr_265_efficient_4k",
      "audio_aac_podcast",
      "util_thumbnails",
      "util_subs_sidecar_basic",
    ]) {
      expect(findPreset(id), id).toBeDefined();
    }
  });

  it("free has exactly the seven presets the contract lists; plans add 7/+6/+6/+4 (7, 13, 19, 23)", () => {
    const freeIds = PRESETS.filter((p) => p.requiredPlan === "free")
      .map((p) => p.id)
      .sort();
    expect(freeIds).toEqual(
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
    const cumulative = PLAN_IDS.map((plan) => count(PRESETS, (p) => planIncludes(plan, p.requiredPlan)));
    expect(cumulative).toEqual([7, 13, 19, 23]);
    const adds = PLAN_IDS.map((plan) => count(PRESETS, (p) => p.requiredPlan === plan));
    expect(adds).toEqual([7, 6, 6, 4]);
  });

  it("fixes the required plans the contract names", () => {
    expect(findPreset("hls_abr_264_standard")!.requiredPlan).toBe("pro");
    expect(findPreset("hls_abr_265_efficient_4k")!.requiredPlan).toBe("enterprise");
    for (const plan of PLAN_IDS) expect(planIncludes(plan, findPreset("mp4_264_720p")!.requiredPlan)).toBe(true);
  });

  it("counts by category: standard 3, premium 1, advanced 6, streaming 4, live 2, social 2, audio 2, utility 3", () => {
    const byCategory = Object.fromEntries(PRESET_CATEGORIES.map((c) => [c, count(PRESETS, (p) => p.category === c)]));
    expect(byCategory).toEqual({
      standard: 3,
      premium: 1,
      advanced: 6,
      streaming: 4,
      live: 2,
      social: 2,
      audio: 2,
      utility: 3,
    });
  });

  it("counts by type: vod 8, streaming_vod 6, live 2, audio 2, utility 3, filter 2", () => {
    const types = ["vod", "streaming_vod", "live", "audio", "utility", "filter"] as const;
    const byType = Object.fromEntries(types.map((t) => [t, count(PRESETS, (p) => p.type === t)]));
    expect(byType).toEqual({ vod: 8, streaming_vod: 6, live: 2, audio: 2, utility: 3, filter: 2 });
  });

  it("specifications: videoCodec on all but audio-only, resolution and crf on the 8 single-output presets, maxrate on 7", () => {
    const specs = PRESETS.map((p) => ({ p, s: presentPreset(p, "enterprise").specifications }));
    for (const { p, s } of specs) {
      expect("videoCodec" in s, p.id).toBe(p.type !== "audio");
      expect("resolution" in s, p.id).toBe(p.type === "vod");
      expect("crf" in s, p.id).toBe(p.type === "vod");
      if ("resolution" in s) expect(s.resolution).toMatch(/^\d+x\d+$/);
      if ("maxrate" in s) expect(s.maxrate).toMatch(/^\d+k$/);
      if ("crf" in s) expect(Number.isInteger(s.crf)).toBe(true);
      expect(Object.values(s).every((v) => v !== undefined && v !== null)).toBe(true);
    }
    expect(count(specs, ({ s }) => "maxrate" in s)).toBe(7);
    expect(count(specs, ({ s }) => "resolution" in s)).toBe(8);
    expect(count(specs, ({ s }) => "crf" in s)).toBe(8);
    const ladders = specs.filter(({ p }) => p.type === "streaming_vod");
    for (const { s } of ladders) expect(Object.keys(s).sort()).toEqual(["audioCodec", "videoCodec"]);
  });

  it("audioCodec on every preset that keeps audio; thumbnails and sprites keep none", () => {
    for (const p of PRESETS) {
      const keepsAudio = !["util_thumbnails", "util_sprite_vtt"].includes(p.id);
      expect("audioCodec" in presentPreset(p, "free").specifications, p.id).toBe(keepsAudio);
    }
  });

  it("output form: MP4, social and audio presets are one file; streaming, thumbnails and sprites are a ZIP", () => {
    for (const p of PRESETS) {
      if (["vod", "audio", "filter"].includes(p.type)) expect(p.output, p.id).toBe("file");
      if (["streaming_vod", "live"].includes(p.type) || ["util_thumbnails", "util_sprite_vtt"].includes(p.id)) {
        expect(p.output, p.id).toBe("zip");
      }
    }
  });
});

describe("contract §5.8 GET /presets › meta and visibility", () => {
  it("meta stats publish the catalogue counts for every plan", () => {
    for (const plan of PLAN_IDS) {
      const { meta } = presetCatalogueView(plan);
      expect(meta.userPlan).toBe(plan);
      expect(meta.totalPresets).toBe(23);
      expect(meta.categories).toEqual([
        "standard",
        "premium",
        "advanced",
        "streaming",
        "live",
        "social",
        "audio",
        "utility",
      ]);
      expect(meta.stats.byPlan).toEqual({ free: 7, pro: 6, business: 6, enterprise: 4 });
      expect(meta.stats.byCategory).toEqual({
        standard: 3,
        premium: 1,
        advanced: 6,
        streaming: 4,
        live: 2,
        social: 2,
        audio: 2,
        utility: 3,
      });
      expect(meta.stats.byType).toEqual({ vod: 8, streaming_vod: 6, live: 2, audio: 2, utility: 3, filter: 2 });
      expect(meta.stats.total).toBe(23);
    }
  });

  it("free and pro see the whole catalogue with locked presets marked; business and enterprise see only available ones", () => {
    const expected = { free: [23, 7, 16], pro: [23, 13, 10], business: [19, 19, 4], enterprise: [23, 23, 0] } as const;
    for (const plan of PLAN_IDS) {
      const view = presetCatalogueView(plan);
      const [shown, available, locked] = expected[plan];
      expect(view.presets).toHaveLength(shown);
      expect(view.meta.availablePresets).toBe(available);
      expect(view.meta.lockedPresets).toBe(locked);
      for (const p of view.presets) expect("upgradeMessage" in p).toBe(!p.available);
    }
  });
});

describe("GET /presets payload, to the byte", () => {
  // catalogue.golden.json is the recorded public view: the definitions must give it to the byte,
  // the order of every key included.
  it.each(PLAN_IDS)("the %s view equals the recorded one", (plan) => {
    expect(JSON.stringify(presetCatalogueView(plan))).toBe(JSON.stringify(golden.views[plan]));
  });

  it("every catalogue entry (output form and extension too) equals the recorded one", () => {
    expect(JSON.stringify(PRESETS)).toBe(JSON.stringify(golden.presets));
  });
});
