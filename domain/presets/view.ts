import { PLAN_DISPLAY_NAMES, PLAN_IDS, planIncludes, type PlanId } from "../plans";
import { PRESETS, type CatalogueEntry } from "./catalogue";
import { PRESET_CATEGORIES, PRESET_TYPES } from "./definitions";

export function upgradeMessage(preset: CatalogueEntry): string {
  return `Upgrade to the ${PLAN_DISPLAY_NAMES[preset.requiredPlan]} plan to use ${preset.name} (${preset.id}).`;
}

/** A preset as GET /presets shows it to a caller on `plan` (docs/contract.md §3.7). */
export function presentPreset(preset: CatalogueEntry, plan: PlanId) {
  const available = planIncludes(plan, preset.requiredPlan);
  return {
    id: preset.id,
    name: preset.name,
    category: preset.category,
    specifications: withoutEmpty(preset.specifications),
    estimatedProcessingTime: preset.estimatedProcessingTime,
    requiredPlan: preset.requiredPlan,
    available,
    ...(available ? {} : { upgradeMessage: upgradeMessage(preset) }),
  };
}

function withoutEmpty<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(
    Object.entries(value).filter(([, v]) => v !== undefined && v !== null && v !== ""),
  ) as Partial<T>;
}

function countBy<K extends string>(keys: readonly K[], keyOf: (p: CatalogueEntry) => K): Record<K, number> {
  const counts = Object.fromEntries(keys.map((k) => [k, 0])) as Record<K, number>;
  for (const preset of PRESETS) counts[keyOf(preset)] += 1;
  return counts;
}

/**
 * The GET /presets body. Business and Enterprise callers receive only the presets they can use
 * (docs/contract.md §5.8); the others see the whole catalogue with locked entries marked.
 */
export function presetCatalogueView(plan: PlanId) {
  const all = PRESETS.map((p) => presentPreset(p, plan));
  const availableCount = all.filter((p) => p.available).length;
  const onlyAvailable = plan === "business" || plan === "enterprise";
  return {
    presets: onlyAvailable ? all.filter((p) => p.available) : all,
    meta: {
      userPlan: plan,
      totalPresets: PRESETS.length,
      availablePresets: availableCount,
      lockedPresets: PRESETS.length - availableCount,
      categories: [...PRESET_CATEGORIES],
      stats: {
        total: PRESETS.length,
        byCategory: countBy(PRESET_CATEGORIES, (p) => p.category),
        byPlan: countBy(PLAN_IDS, (p) => p.requiredPlan),
        byType: countBy(PRESET_TYPES, (p) => p.type),
      },
    },
  };
}
