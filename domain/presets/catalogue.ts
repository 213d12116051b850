/**
 * The public catalogue: each preset as the contract shows it, derived from its definition.
 * `test/unit/domain/catalogue.test.ts` recomputes each published count.
 */
import type { PlanId } from "../plans";
import {
  PRESET_DEFINITIONS,
  type PresetCategory,
  type PresetDefinition,
  type PresetId,
  type PresetType,
} from "./definitions";
import type { PresetRecipe } from "./recipes";

/** Whether `outputUrl` points at one media file or at a ZIP of many (docs/contract.md §3.9). */
type OutputForm = "file" | "zip";

interface PresetSpecifications {
  videoCodec?: string;
  audioCodec?: string;
  resolution?: string;
  maxrate?: string;
  crf?: number;
}

export interface CatalogueEntry {
  id: PresetId;
  name: string;
  category: PresetCategory;
  type: PresetType;
  requiredPlan: PlanId;
  output: OutputForm;
  /** File extension of the single output, or "zip". */
  extension: string;
  specifications: PresetSpecifications;
  estimatedProcessingTime: string;
}

/** The settings the contract shows, as display strings, from the recipe's numbers. */
function specificationsOf(recipe: PresetRecipe): PresetSpecifications {
  switch (recipe.kind) {
    case "progressive":
      return {
        videoCodec: recipe.video.codec,
        audioCodec: recipe.audioCodec,
        resolution: `${recipe.size.width}x${recipe.size.height}`,
        ...(recipe.maxrate === undefined ? {} : { maxrate: `${recipe.maxrate}k` }),
        crf: recipe.crf,
      };
    case "ladder":
    case "subtitle-sidecars":
      return { videoCodec: recipe.video.codec, audioCodec: recipe.audioCodec };
    case "podcast":
    case "mp3":
      return { audioCodec: recipe.audioCodec };
    case "audio-filter":
      // The picture is copied as it is; only the audio is processed.
      return { videoCodec: "copy", audioCodec: recipe.audioCodec };
    case "thumbnails":
    case "sprite":
      // JPEG stills, no audio.
      return { videoCodec: "mjpeg" };
  }
}

function entryOf(id: PresetId, { recipe, ...listing }: PresetDefinition): CatalogueEntry {
  // A recipe that writes one file names its container; the others fill a directory, sent as a ZIP.
  const single = "container" in recipe;
  return {
    id,
    name: listing.name,
    category: listing.category,
    type: listing.type,
    requiredPlan: listing.requiredPlan,
    output: single ? "file" : "zip",
    extension: single ? recipe.container : "zip",
    specifications: specificationsOf(recipe),
    estimatedProcessingTime: listing.estimatedProcessingTime,
  };
}

export const PRESETS: readonly CatalogueEntry[] = (
  Object.entries(PRESET_DEFINITIONS) as [PresetId, PresetDefinition][]
).map(([id, definition]) => entryOf(id, definition));

const BY_ID = new Map<string, CatalogueEntry>(PRESETS.map((p) => [p.id, p]));

/** Every identifier of the catalogue has its entry; any other string may not. */
export function findPreset(id: PresetId): CatalogueEntry;
export function findPreset(id: string): CatalogueEntry | undefined;
export function findPreset(id: string): CatalogueEntry | undefined {
  return BY_ID.get(id);
}

export const PRESET_IDS: readonly PresetId[] = PRESETS.map((p) => p.id);

/** Timeline jobs are stored as jobs under this preset name (docs/contract.md §1.2). */
export const EDL_PRESET_ID = "edl_custom";
