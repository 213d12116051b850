/**
 * HLS playlists of a stream (docs/playback.md): the master playlist, and each rendition's media
 * playlist over the segments stored so far. While the job runs a media playlist is an EVENT
 * playlist (it only grows, from media sequence 0, and starts players at its beginning); once it
 * has ended it is the VOD playlist over the same segments. All URIs are relative, so one signed
 * prefix serves the whole tree.
 */
import {
  AUDIO_RENDITION,
  INIT_SEGMENT,
  MEDIA_PLAYLIST,
  segmentName,
  type StreamLayout,
  type StreamRendition,
} from "./layout";

const AUDIO_GROUP = "audio";

/** Version 6 for MPEG-TS (EXT-X-INDEPENDENT-SEGMENTS wants 6 for its fractional EXTINF and EXT-X-START); 7 for EXT-X-MAP in a media playlist. */
const versionOf = (layout: StreamLayout) => (layout.segmentType === "fmp4" ? 7 : 6);

const frameRate = (fraction: string | undefined) => {
  const [num, den = 1] = (fraction ?? "").split("/").map(Number);
  return num > 0 && den > 0 ? (num / den).toFixed(3) : undefined;
};

/**
 * The master playlist: each video rung a variant, the audio (when there is some) one rendition
 * they all share. `codecs` gives each rendition's codecs string, by name.
 */
export function masterPlaylist(layout: StreamLayout, codecs: ReadonlyMap<string, string>): string {
  const audio = layout.renditions.find((r) => r.kind === "audio");
  const lines = ["#EXTM3U", `#EXT-X-VERSION:${versionOf(layout)}`, "#EXT-X-INDEPENDENT-SEGMENTS"];
  if (audio) {
    lines.push(
      `#EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID="${AUDIO_GROUP}",NAME="audio",DEFAULT=YES,AUTOSELECT=YES,URI="${AUDIO_RENDITION}/${MEDIA_PLAYLIST}"`,
    );
  }
  for (const video of layout.renditions.filter((r) => r.kind === "video")) {
    lines.push(`#EXT-X-STREAM-INF:${variantAttributes(video, audio, codecs)}`, `${video.name}/${MEDIA_PLAYLIST}`);
  }
  return `${lines.join("\n")}\n`;
}

/** BANDWIDTH and AVERAGE-BANDWIDTH count the audio the variant plays with, as HLS asks. */
function variantAttributes(
  video: StreamRendition,
  audio: StreamRendition | undefined,
  codecs: ReadonlyMap<string, string>,
): string {
  const streams = [video, ...(audio ? [audio] : [])].flatMap((r) => codecs.get(r.name) ?? []);
  const attributes = [
    `BANDWIDTH=${video.bandwidth + (audio?.bandwidth ?? 0)}`,
    `AVERAGE-BANDWIDTH=${video.averageBandwidth + (audio?.averageBandwidth ?? 0)}`,
    `CODECS="${streams.join(",")}"`,
    ...(video.width && video.height ? [`RESOLUTION=${video.width}x${video.height}`] : []),
    ...(frameRate(video.frameRate) ? [`FRAME-RATE=${frameRate(video.frameRate)}`] : []),
    ...(audio ? [`AUDIO="${AUDIO_GROUP}"`] : []),
  ];
  return attributes.join(",");
}

export interface MediaPlaylistOptions {
  /** The stream is complete: the VOD playlist, with EXT-X-ENDLIST. */
  ended: boolean;
  /** When the first segment's first frame was encoded, for EXT-X-PROGRAM-DATE-TIME (layouts that carry it). */
  startedAt?: Date;
}

/**
 * One rendition's media playlist over `durations`, its segments' lengths in seconds from the
 * first, unbroken (the caller stops at the first segment missing).
 */
export function mediaPlaylist(
  layout: StreamLayout,
  durations: readonly number[],
  options: MediaPlaylistOptions,
): string {
  const lines = [
    "#EXTM3U",
    `#EXT-X-VERSION:${versionOf(layout)}`,
    `#EXT-X-TARGETDURATION:${Math.ceil(layout.segmentSeconds)}`,
    "#EXT-X-MEDIA-SEQUENCE:0",
    `#EXT-X-PLAYLIST-TYPE:${options.ended ? "VOD" : "EVENT"}`,
    "#EXT-X-INDEPENDENT-SEGMENTS",
    // Players join a growing playlist at its live edge unless told: this one is watched from the start.
    ...(options.ended ? [] : ["#EXT-X-START:TIME-OFFSET=0"]),
    ...(layout.segmentType === "fmp4" ? [`#EXT-X-MAP:URI="${INIT_SEGMENT}"`] : []),
  ];
  let elapsed = 0;
  durations.forEach((duration, index) => {
    if (layout.programDateTime && options.startedAt) {
      lines.push(`#EXT-X-PROGRAM-DATE-TIME:${new Date(options.startedAt.getTime() + elapsed * 1000).toISOString()}`);
    }
    lines.push(`#EXTINF:${duration.toFixed(6)},`, segmentName(index, layout.segmentType));
    elapsed += duration;
  });
  if (options.ended) lines.push("#EXT-X-ENDLIST");
  return `${lines.join("\n")}\n`;
}
