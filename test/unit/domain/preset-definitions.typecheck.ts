/**
 * Compile-time checks (npm run typecheck, which npm test runs beside vitest): a preset definition cannot leave out the encoder's
 * numbers, nor carry a recipe of another type. Each line below must fail to compile; if the
 * types loosen, tsc reports the @ts-expect-error as unused.
 */
import { PRESET_DEFINITIONS, type PresetDefinition } from "../../../domain/presets/definitions";

const listing = {
  name: "Example",
  category: "standard",
  requiredPlan: "free",
  estimatedProcessingTime: "1-2 minutes",
} as const;
const { recipe: vod } = PRESET_DEFINITIONS.mp4_264_720p;
const { recipe: ladder } = PRESET_DEFINITIONS.hls_abr_264_basic;
const { size: _size, ...withoutSize } = vod;

export const checks: PresetDefinition[] = [
  { ...listing, type: "vod", recipe: vod },
  { ...listing, type: "streaming_vod", recipe: ladder },
  // @ts-expect-error a preset without its recipe
  { ...listing, type: "vod" },
  // @ts-expect-error a vod preset is not made by a ladder
  { ...listing, type: "vod", recipe: ladder },
  // @ts-expect-error a vod recipe without its CRF
  { ...listing, type: "vod", recipe: { ...vod, crf: undefined } },
  // @ts-expect-error a vod recipe without its size
  { ...listing, type: "vod", recipe: withoutSize },
  // @ts-expect-error a type the catalogue does not have
  { ...listing, type: "podcast", recipe: PRESET_DEFINITIONS.audio_aac_podcast.recipe },
];
