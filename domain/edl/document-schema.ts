/**
 * The EDL document as JSON Schema, generated from the tables the validator reads with
 * (./format.ts, ./output.ts), for the OpenAPI document (docs/contract.md §3.10). Documentation
 * only: the service judges a timeline with ./validate.ts, whose errors are PUT's `errors` and
 * POST's `EDL validation failed`. test/unit/openapi checks that every timeline the validator
 * accepts fits it.
 */
import { OVERLAY_FIELDS, TEXT_FIELDS, UNAPPLIED_FIELDS, VIDEO_FIELDS } from "./format";
import { type JsonSchema, tableComponent, tableSchema } from "./kinds";
import { MIN_TIMELINE_SECONDS } from "./limits";
import { OUTPUT_FIELDS } from "./output";
import { EDL_VERSION } from "./schema";

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });

function trackSchema(type: string, clip: { schema: JsonSchema }): JsonSchema {
  return {
    type: "object",
    properties: { type: { type: "string", enum: [type] }, clips: { type: "array", items: clip.schema } },
    required: ["type", "clips"],
  };
}

/** Every EDL component of the OpenAPI document, `EdlDocument` among them, by name. */
export function edlSchemaComponents(): Record<string, JsonSchema> {
  const clips = {
    // Read by ./clips.ts, which puts each clip together from these fields.
    video: tableComponent({ ...VIDEO_FIELDS, ...UNAPPLIED_FIELDS }, { name: "EdlVideoClip" }),
    overlay: tableComponent(OVERLAY_FIELDS, { name: "EdlOverlayClip" }),
    text: tableComponent(TEXT_FIELDS, { name: "EdlTextClip" }),
  };
  return {
    ...Object.assign({}, ...Object.values(clips).map((k) => k.components)),
    EdlOutput: {
      ...tableSchema(OUTPUT_FIELDS, "All optional; `null` reads as absent, as for every optional EDL field."),
      type: ["object", "null"],
    },
    EdlTrack: {
      oneOf: Object.entries(clips).map(([type, clip]) => trackSchema(type, clip)),
      description: "Exactly one video track; overlay and text tracks later in the array draw on top.",
    },
    EdlDocument: {
      type: "object",
      properties: {
        version: { type: "string", enum: [EDL_VERSION] },
        output: ref("EdlOutput"),
        timeline: {
          type: "object",
          properties: { tracks: { type: "array", items: ref("EdlTrack") } },
          required: ["tracks"],
          description: `At least ${MIN_TIMELINE_SECONDS} s long (the end of the last clip on any track), and a frame long at \`output.fps\` when it is set.`,
        },
        metadata: { type: ["object", "null"], additionalProperties: {} },
      },
      required: ["version", "timeline"],
      description: "A timeline of clips, overlays and text assembled into one output file.",
    },
  };
}
