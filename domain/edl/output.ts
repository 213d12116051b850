/** The EDL's `output` object: every setting optional, defaults chosen per container and codec. */
import { isObject } from "./fields";
import { bitrateParser, parseResolution, RESOLUTION_EXPECTED } from "./parsers";
import { type Field, fieldsOf, number, oneOf, parsed } from "./kinds";
import {
  AUDIO_CODECS,
  CONTAINER_CODECS,
  CONTAINERS,
  CRF_RANGE,
  DEFAULT_AUDIO_BITRATE,
  DEFAULT_CODECS,
  DEFAULT_CONTAINER,
  DEFAULT_ENCODER_PRESET,
  ENCODER_PRESETS,
  type OutputSettings,
  VIDEO_CODECS,
} from "./validated-edl";

/** Above 120 fps no player or source in this service's reach benefits; below 1 the muxers misbehave. */
const FPS_RULE = { min: 1, max: 120 } as const;
const VIDEO_BITRATE_KBPS = { min: 50, max: 100_000 } as const;
/** 512k is the most any of the three audio encoders accepts for stereo (libopus). */
const AUDIO_BITRATE_KBPS = { min: 8, max: 512 } as const;

const bitrate = ({ min, max }: { min: number; max: number }, example: string) =>
  parsed(bitrateParser(min, max), `a bitrate such as "${example}", from ${min}k to ${max}k`, {
    type: "string",
    pattern: "^[1-9]\\d*k$",
    example,
  });

/** The defaults that depend on other fields (codecs, crf) are the reader's, below; the rest are here. */
export const OUTPUT_FIELDS = {
  resolution: {
    kind: parsed(parseResolution, RESOLUTION_EXPECTED, { type: "string", pattern: "^\\d+x\\d+$", example: "1280x720" }),
    description: "WIDTHxHEIGHT, even numbers; defaults to the first clip's.",
  },
  fps: { kind: number(FPS_RULE), description: "Defaults to the first clip's." },
  container: { kind: oneOf(CONTAINERS), default: DEFAULT_CONTAINER },
  videoCodec: { kind: oneOf(VIDEO_CODECS), description: "Defaults to the container's usual codec." },
  audioCodec: { kind: oneOf(AUDIO_CODECS), description: "Defaults to the container's usual codec." },
  videoBitrate: { kind: bitrate(VIDEO_BITRATE_KBPS, "2500k") },
  audioBitrate: { kind: bitrate(AUDIO_BITRATE_KBPS, "128k"), default: DEFAULT_AUDIO_BITRATE },
  preset: { kind: oneOf(ENCODER_PRESETS), default: DEFAULT_ENCODER_PRESET, description: "Encoder speed setting." },
  crf: {
    kind: number({ min: 0 }),
    description: "Lower is better quality; at most 51 (x264, x265) or 63 (VP9); defaults to the codec's own.",
  },
} satisfies Record<string, Field<unknown>>;

/**
 * Reads `output`, reporting problems into `errors`. Always returns complete settings (invalid
 * fields replaced by defaults) so an invalid EDL still gets a processing-time estimate.
 */
export function readOutput(value: unknown, errors: string[]): OutputSettings {
  if (value !== undefined && value !== null && !isObject(value)) errors.push("output: must be an object");
  const f = fieldsOf(isObject(value) ? value : {}, "output", { errors, warnings: [] }, OUTPUT_FIELDS);

  const resolution = f.read("resolution");
  const fps = f.read("fps");
  const container = f.read("container");
  const videoCodec = f.read("videoCodec") ?? DEFAULT_CODECS[container].video;
  const audioCodec = f.read("audioCodec") ?? DEFAULT_CODECS[container].audio;
  const videoBitrate = f.read("videoBitrate");
  const audioBitrate = f.read("audioBitrate");
  const preset = f.read("preset");

  const crfMax = CRF_RANGE[videoCodec].max;
  let crf = f.read("crf");
  if (crf !== undefined && crf > crfMax) crf = f.fail("crf", `must be between 0 and ${crfMax} for ${videoCodec}`);
  // A bitrate alone means the caller wants bitrate control; otherwise the codec's usual quality.
  if (crf === undefined && !f.has("crf") && videoBitrate === undefined) crf = CRF_RANGE[videoCodec].default;

  const accepts = CONTAINER_CODECS[container];
  if (!accepts.video.includes(videoCodec)) {
    f.fail(
      "videoCodec",
      `${videoCodec} cannot be stored in ${container} (${container} takes ${accepts.video.join(", ")})`,
    );
  }
  if (!accepts.audio.includes(audioCodec)) {
    f.fail(
      "audioCodec",
      `${audioCodec} cannot be stored in ${container} (${container} takes ${accepts.audio.join(", ")})`,
    );
  }

  return {
    ...(resolution === undefined ? {} : { resolution }),
    ...(fps === undefined ? {} : { fps }),
    container,
    videoCodec,
    audioCodec,
    ...(videoBitrate === undefined ? {} : { videoBitrate }),
    audioBitrate,
    preset,
    ...(crf === undefined ? {} : { crf }),
  };
}
