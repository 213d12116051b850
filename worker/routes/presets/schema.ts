import { z } from "@hono/zod-openapi";
import { PLAN_IDS } from "../../../domain/plans";
import { PRESET_CATEGORIES, PRESET_TYPES } from "../../../domain/presets/definitions";
import { presetCatalogueView } from "../../../domain/presets/view";
import { PlanId } from "../../openapi/common";

const Category = z.enum(PRESET_CATEGORIES).openapi("PresetCategory");
const counts = <K extends readonly [string, ...string[]]>(keys: K) => z.record(z.enum(keys), z.int().min(0));

const Preset = z
  .object({
    id: z.string().openapi({ description: "The value to send as `preset` when creating a job." }),
    name: z.string(),
    category: Category,
    specifications: z
      .object({
        videoCodec: z.string().optional(),
        audioCodec: z.string().optional(),
        resolution: z.string().optional().openapi({ description: "WIDTHxHEIGHT; single-output presets only." }),
        maxrate: z.string().optional().openapi({ example: "3000k" }),
        crf: z.int().optional(),
      })
      .openapi({ description: "Fields without a value are left out, so the shape differs between presets." }),
    estimatedProcessingTime: z.string(),
    requiredPlan: PlanId.openapi({ description: "The lowest plan that includes the preset." }),
    available: z.boolean().openapi({ description: "Whether the caller's plan includes it." }),
    upgradeMessage: z.string().optional().openapi({ description: "Present only when `available` is false." }),
  })
  .openapi("Preset");

export const PresetCatalogue = z
  .object({
    presets: z
      .array(Preset)
      .openapi({ description: "Business and Enterprise callers receive only the presets they can use." }),
    meta: z.object({
      userPlan: PlanId,
      totalPresets: z.int(),
      availablePresets: z.int(),
      lockedPresets: z.int(),
      categories: z.array(Category),
      stats: z.object({
        total: z.int(),
        byCategory: counts(PRESET_CATEGORIES),
        byPlan: counts(PLAN_IDS).openapi({ description: "How many presets each plan adds." }),
        byType: counts(PRESET_TYPES),
      }),
    }),
    links: z.object({ self: z.string(), jobs: z.string() }),
  })
  .openapi("PresetCatalogue");

export const PRESET_LINKS = { self: "/api/v1/presets", jobs: "/api/v1/jobs" };

/** The examples are the service's own answers, computed from the catalogue. */
export const presetCatalogueExamples = {
  anonymous: {
    summary: "Without a key: the free plan's view, locked presets marked",
    value: { ...presetCatalogueView("free"), links: PRESET_LINKS },
  },
  business: {
    summary: "A Business key: only the presets it can use",
    value: { ...presetCatalogueView("business"), links: PRESET_LINKS },
  },
};
