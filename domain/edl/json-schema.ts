/**
 * The EDL document as JSON Schema, generated from the tables the validator reads with
 * (./field-tables-1-0.ts, ./field-tables-1-1.ts, ./output.ts), for the OpenAPI document
 * (docs/contract.md §3.10).
 * Documentation only: the service judges a timeline with ./validate.ts, whose errors are PUT's
 * `errors` and POST's `EDL validation failed`. test/unit/openapi checks that every timeline the
 * validator accepts fits it.
 */
import { OVERLAY_FIELDS, TEXT_FIELDS, UNAPPLIED_FIELDS, VIDEO_FIELDS } from "./field-tables-1-0";
import { CAPTION_FIELDS, OVERLAY_FIELDS_1_1, TEXT_FIELDS_1_1, VIDEO_FIELDS_1_1 } from "./field-tables-1-1";
import { type JsonSchema, type Table, tableComponent, tableSchema } from "./kinds";
import { MIN_TIMELINE_SECONDS } from "./limits";
import { OUTPUT_FIELDS } from "./output";
import type { EdlVersion } from "./validated-edl";

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });

/** Each version's clip tables by track type, under the names the reference shows. */
const CLIPS: Record<
  EdlVersion,
  Record<string, { name: string; table: Table; description?: string; example?: unknown }>
> = {
  "1.0": {
    video: { name: "EdlVideoClip", table: { ...VIDEO_FIELDS, ...UNAPPLIED_FIELDS } },
    overlay: { name: "EdlOverlayClip", table: OVERLAY_FIELDS },
    text: { name: "EdlTextClip", table: TEXT_FIELDS },
  },
  "1.1": {
    video: { name: "EdlVideoClipV1_1", table: { ...VIDEO_FIELDS, ...VIDEO_FIELDS_1_1 } },
    overlay: { name: "EdlOverlayClipV1_1", table: { ...OVERLAY_FIELDS, ...OVERLAY_FIELDS_1_1 } },
    text: { name: "EdlTextClipV1_1", table: { ...TEXT_FIELDS, ...TEXT_FIELDS_1_1 } },
    caption: {
      name: "EdlCaptionClip",
      table: CAPTION_FIELDS,
      description: "Subtitles in the text clip's style, from a file (`src`) or inline (`cues`): exactly one of them.",
      example: {
        id: "subtitles",
        src: "https://media.example.com/captions.srt",
        fontSize: 36,
        outline: { color: "#000000", width: 2 },
      },
    },
  },
};

const SUFFIX: Record<EdlVersion, string> = { "1.0": "", "1.1": "V1_1" };
const DESCRIPTION: Record<EdlVersion, string> = {
  "1.0": "Version 1.0: transform, crop, filters, transition and freeze are accepted with any value and not applied.",
  "1.1": "Version 1.1: transitions, crop, transform, filters and freeze are applied, and caption tracks drawn.",
};

/** One version's document, its tracks and its clips, by component name. */
function versionComponents(version: EdlVersion): Record<string, JsonSchema> {
  const clips = Object.entries(CLIPS[version]).map(([type, { table, ...doc }]) => ({
    type,
    ...tableComponent(table, doc),
  }));
  const track = `EdlTrack${SUFFIX[version]}`;
  const types = clips.map((c) => c.type).join(", ");
  return {
    ...Object.assign({}, ...clips.map((c) => c.components)),
    [track]: {
      oneOf: clips.map((clip) => ({
        type: "object",
        properties: { type: { type: "string", enum: [clip.type] }, clips: { type: "array", items: clip.schema } },
        required: ["type", "clips"],
      })),
      description: `One of ${types}. Exactly one video track; the other tracks later in the array draw on top.`,
    },
    [`EdlDocumentV${version.replace(".", "_")}`]: {
      type: "object",
      properties: {
        version: { type: "string", enum: [version] },
        output: ref("EdlOutput"),
        timeline: {
          type: "object",
          properties: { tracks: { type: "array", items: ref(track) } },
          required: ["tracks"],
          description: `At least ${MIN_TIMELINE_SECONDS} s long (the end of the last clip on any track), and a frame long at \`output.fps\` when it is set.`,
        },
        metadata: { type: ["object", "null"], additionalProperties: {} },
      },
      required: ["version", "timeline"],
      description: DESCRIPTION[version],
    },
  };
}

/** Every EDL component of the OpenAPI document, `EdlDocument` among them, by name. */
export function edlSchemaComponents(): Record<string, JsonSchema> {
  return {
    ...versionComponents("1.0"),
    ...versionComponents("1.1"),
    EdlOutput: {
      ...tableSchema(OUTPUT_FIELDS, "All optional; `null` reads as absent, as for every optional EDL field."),
      type: ["object", "null"],
    },
    EdlDocument: {
      oneOf: [ref("EdlDocumentV1_0"), ref("EdlDocumentV1_1")],
      description:
        "A timeline of clips, overlays, text and (1.1) captions assembled into one output file; `version` says which.",
    },
  };
}
