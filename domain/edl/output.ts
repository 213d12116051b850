/** The EDL's `output` object: every setting optional, defaults chosen per container and codec. */
import { fieldsOf, isObject } from "./fields";
import { bitrateParser, parseResolution, RESOLUTION_EXPECTED } from "./formats";
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
} from "./schema";

/** Above 120 fps no player or source in this service's reach benefits; below 1 the muxers misbehave. */
export const FPS_RULE = { min: 1, max: 120 } as const;
const VIDEO_BITRATE_KBPS = { min: 50, max: 100_000 } as const;
/** 512k is the most any of the three audio encoders accepts for stereo (libopus). */
const AUDIO_BITRATE_KBPS = { min: 8, max: 512 } as const;

/**
 * Reads `output`, reporting problems into `errors`. Always returns complete settings (invalid
 * fields replaced by defaults) so an invalid EDL still gets a processing-time estimate.
 */
export function readOutput(value: unknown, errors: string[]): OutputSettings {
  if (value !== undefined && value !== null && !isObject(value)) errors.push("output: must be an object");
  const f = fieldsOf(isObject(value) ? value : {}, "output", errors);

  const resolution = f.parsed("resolution", parseResolution, RESOLUTION_EXPECTED);
  const fps = f.number("fps", FPS_RULE);
  const container = f.oneOf("container", CONTAINERS) ?? DEFAULT_CONTAINER;
  const videoCodec = f.oneOf("videoCodec", VIDEO_CODECS) ?? DEFAULT_CODECS[container].video;
  const audioCodec = f.oneOf("audioCodec", AUDIO_CODECS) ?? DEFAULT_CODECS[container].audio;
  const videoBitrate = f.parsed(
    "videoBitrate",
    bitrateParser(VIDEO_BITRATE_KBPS.min, VIDEO_BITRATE_KBPS.max),
    `a bitrate such as "2500k", from ${VIDEO_BITRATE_KBPS.min}k to ${VIDEO_BITRATE_KBPS.max}k`,
  );
  const audioBitrate =
    f.parsed(
      "audioBitrate",
      bitrateParser(AUDIO_BITRATE_KBPS.min, AUDIO_BITRATE_KBPS.max),
      `a bitrate such as "128k", from ${AUDIO_BITRATE_KBPS.min}k to ${AUDIO_BITRATE_KBPS.max}k`,
    ) ?? DEFAULT_AUDIO_BITRATE;
  const preset = f.oneOf("preset", ENCODER_PRESETS) ?? DEFAULT_ENCODER_PRESET;

  const crfMax = CRF_RANGE[videoCodec].max;
  let crf = f.number("crf", { min: 0 });
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
