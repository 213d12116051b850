/**
 * The EDL document as the reference shows it (docs/contract.md §3.10). Documentation only: the
 * service judges a timeline with domain/edl/validate.ts, which reports problems as PUT's
 * `errors` and POST's `EDL validation failed` rather than a `Validation error`. The ranges come
 * from the validator's own constants; test/unit/openapi checks that every timeline the
 * validator accepts also fits this schema.
 */
import { z } from "@hono/zod-openapi";
import {
  FONT_SIZE_RULE,
  MAX_FONT_FAMILY_LENGTH,
  MAX_SECONDS,
  OPACITY_RULE,
  SPEED_RULE,
  VOLUME_DB_RULE,
} from "../../../domain/edl/clips";
import { MAX_PERCENT, MAX_PIXELS } from "../../../domain/edl/formats";
import { MAX_TEXT_LINES, MIN_TIMELINE_SECONDS } from "../../../domain/edl/limits";
import { FPS_RULE } from "../../../domain/edl/output";
import {
  AUDIO_CODECS,
  BLEND_MODES,
  CONTAINERS,
  EDL_VERSION,
  ENCODER_PRESETS,
  FONT_WEIGHTS,
  POSITION_KEYWORDS,
  TEXT_ALIGNS,
  UNAPPLIED_FEATURES,
  VIDEO_CODECS,
} from "../../../domain/edl/schema";

const seconds = z.number().min(0).max(MAX_SECONDS).openapi({ description: "Seconds." });
const positiveSeconds = z.number().gt(0).max(MAX_SECONDS).openapi({ description: "Seconds." });
const url = z.string().openapi({
  format: "uri",
  description: "Public http(s) URL; each distinct URL counts once toward the plan's asset limit.",
});
const hexColor = z
  .string()
  .regex(/^#([0-9a-fA-F]{3}|[0-9a-fA-F]{6}|[0-9a-fA-F]{8})$/)
  .openapi({ example: "#FFFFFF" });
const bitrate = z
  .string()
  .regex(/^[1-9]\d*k$/)
  .openapi({ example: "2500k" });
const coordinate = z.union([z.number().min(-MAX_PIXELS).max(MAX_PIXELS), z.enum(POSITION_KEYWORDS)]);
const position = z
  .object({ x: coordinate.optional(), y: coordinate.optional() })
  .openapi("EdlPosition", { description: "Pixels from the top-left corner, or a keyword; both default to center." });
const length = z.union([
  z.number().gt(0).max(MAX_PIXELS).openapi({ description: "Pixels." }),
  z
    .string()
    .regex(/^\d{1,4}(\.\d+)?%$/)
    .openapi({ description: `Percent of the output frame, up to ${MAX_PERCENT}%.`, example: "25%" }),
]);
const fades = { fadeIn: seconds.optional(), fadeOut: seconds.optional() };

/** Clip properties the service accepts without applying; PUT /edl names them in a warning. */
const unapplied = Object.fromEntries(
  UNAPPLIED_FEATURES.map((name) => [
    name,
    z.unknown().optional().openapi({ description: "Accepted but not applied." }),
  ]),
);

const EdlVideoClip = z
  .object({
    id: z.string().openapi({ description: "Unique among the timeline's clips." }),
    src: url,
    in: seconds.openapi({ description: "Start in the source, seconds." }),
    out: seconds.openapi({ description: "End in the source, seconds; greater than `in`." }),
    startTime: seconds.openapi({ description: "Start on the timeline, seconds." }),
    speed: z.number().min(SPEED_RULE.min).max(SPEED_RULE.max).optional().openapi({ default: 1 }),
    mute: z.boolean().optional(),
    volume: z
      .number()
      .min(VOLUME_DB_RULE.min)
      .max(VOLUME_DB_RULE.max)
      .optional()
      .openapi({ description: "Gain in dB.", default: 0 }),
    replaceAudio: url.optional().openapi({ description: "Audio played instead of the clip's own, from its start." }),
    ...unapplied,
  })
  .openapi("EdlVideoClip");

const EdlOverlayClip = z
  .object({
    id: z.string(),
    src: url.openapi({ description: "A PNG or JPG image." }),
    startTime: seconds,
    duration: positiveSeconds,
    position: position.optional(),
    size: z
      .object({ width: length.optional(), height: length.optional() })
      .optional()
      .openapi({ description: "A missing side keeps the image's aspect ratio." }),
    opacity: z.number().min(OPACITY_RULE.min).max(OPACITY_RULE.max).optional().openapi({ default: 1 }),
    ...fades,
    blendMode: z.enum(BLEND_MODES).optional().openapi({ default: "normal" }),
  })
  .openapi("EdlOverlayClip");

const EdlTextClip = z
  .object({
    id: z.string(),
    text: z.string().openapi({
      description: `One line per line break; at most ${MAX_TEXT_LINES} lines across a timeline's text clips.`,
    }),
    startTime: seconds,
    duration: positiveSeconds,
    fontSize: z.number().gt(FONT_SIZE_RULE.min).max(FONT_SIZE_RULE.max).optional().openapi({ default: 48 }),
    fontColor: hexColor.optional().openapi({ default: "#FFFFFF" }),
    fontFamily: z.string().max(MAX_FONT_FAMILY_LENGTH).optional().openapi({ default: "Arial" }),
    fontWeight: z.enum(FONT_WEIGHTS).optional(),
    textAlign: z.enum(TEXT_ALIGNS).optional(),
    position: position.optional(),
    background: z
      .object({
        color: hexColor.optional(),
        opacity: z.number().min(0).max(1).optional(),
        padding: z.number().min(0).optional(),
      })
      .optional(),
    outline: z.object({ color: hexColor.optional(), width: z.number().min(0).optional() }).optional(),
    shadow: z
      .object({
        color: hexColor.optional(),
        offsetX: z.number().optional(),
        offsetY: z.number().optional(),
        blur: z.number().min(0).optional(),
      })
      .optional()
      .openapi({ description: "`blur` is not applied: the shadow is drawn sharp, with a warning." }),
    ...fades,
  })
  .openapi("EdlTextClip");

const EdlTrack = z
  .discriminatedUnion("type", [
    z.object({ type: z.literal("video"), clips: z.array(EdlVideoClip) }),
    z.object({ type: z.literal("overlay"), clips: z.array(EdlOverlayClip) }),
    z.object({ type: z.literal("text"), clips: z.array(EdlTextClip) }),
  ])
  .openapi("EdlTrack", {
    description: "Exactly one video track; overlay and text tracks later in the array draw on top.",
  });

const EdlOutput = z
  .object({
    resolution: z
      .string()
      .regex(/^\d+x\d+$/)
      .optional()
      .openapi({ description: "WIDTHxHEIGHT, even numbers; defaults to the first clip's.", example: "1280x720" }),
    fps: z
      .number()
      .min(FPS_RULE.min)
      .max(FPS_RULE.max)
      .optional()
      .openapi({ description: "Defaults to the first clip's." }),
    container: z.enum(CONTAINERS).optional().openapi({ default: "mp4" }),
    videoCodec: z.enum(VIDEO_CODECS).optional(),
    audioCodec: z.enum(AUDIO_CODECS).optional(),
    videoBitrate: bitrate.optional(),
    audioBitrate: bitrate.optional().openapi({ default: "128k", example: "128k" }),
    preset: z.enum(ENCODER_PRESETS).optional().openapi({ description: "Encoder speed setting.", default: "veryfast" }),
    crf: z.number().min(0).optional().openapi({ description: "Lower is better quality." }),
  })
  .openapi("EdlOutput", { description: "All optional; `null` reads as absent, as for every optional EDL field." });

export const EdlDocument = z
  .object({
    version: z.literal(EDL_VERSION),
    output: EdlOutput.nullish(),
    timeline: z.object({ tracks: z.array(EdlTrack) }).openapi({
      description: `At least ${MIN_TIMELINE_SECONDS} s long (the end of the last clip on any track), and a frame long at \`output.fps\` when it is set.`,
    }),
    metadata: z.record(z.string(), z.unknown()).nullish(),
  })
  .openapi("EdlDocument", { description: "A timeline of clips, overlays and text assembled into one output file." });
