/**
 * The DASH MPD of a stream (docs/playback.md): a video adaptation set of every rung and an audio
 * one, each representation's segments listed by a SegmentTimeline over the fMP4 segments stored
 * so far. While the job runs the MPD is dynamic (a player refreshes it as it grows); once it has
 * ended it is static over the same segments. URIs are relative to the MPD.
 */
import {
  INIT_SEGMENT,
  MEDIA_OFFSET_SECONDS,
  segmentExtension,
  type StreamLayout,
  type StreamRendition,
} from "./layout";

/** One clock for every representation: 90 kHz counts both 30000/1001 video frames and 1024-sample AAC frames at 48 kHz exactly. */
const TIMESCALE = 90_000;

export interface RenditionSegments {
  /** Its codecs string, read off its first segment. */
  codecs: string;
  /** Where its first segment starts on the stream's clock, in seconds (its tfdt); MEDIA_OFFSET_SECONDS unless told. */
  start?: number;
  /** Its segments' lengths in seconds, from the first, unbroken. */
  durations: readonly number[];
}

export interface MpdOptions {
  ended: boolean;
  /** When the stream began, the dynamic MPD's availabilityStartTime: fixed for the stream's life. */
  startedAt: Date;
  now: Date;
}

const seconds = (value: number) => `PT${+value.toFixed(3)}S`;
const xmlText = (value: string) => value.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/"/g, "&quot;");

/** The S elements of a timeline: runs of equal lengths folded into `r`, times in TIMESCALE from the rendition's start. */
function timeline({ start = MEDIA_OFFSET_SECONDS, durations }: RenditionSegments): string {
  const entries: { t: number; d: number; r: number }[] = [];
  let elapsed = start;
  for (const duration of durations) {
    const t = Math.round(elapsed * TIMESCALE);
    elapsed += duration;
    const d = Math.round(elapsed * TIMESCALE) - t;
    const last = entries[entries.length - 1];
    if (last && last.d === d) last.r += 1;
    else entries.push({ t, d, r: 0 });
  }
  return entries.map(({ t, d, r }) => `<S t="${t}" d="${d}"${r > 0 ? ` r="${r}"` : ""}/>`).join("");
}

function representation(layout: StreamLayout, rendition: StreamRendition, segments: RenditionSegments): string {
  const size = rendition.width && rendition.height ? ` width="${rendition.width}" height="${rendition.height}"` : "";
  const rate = rendition.frameRate ? ` frameRate="${xmlText(rendition.frameRate)}"` : "";
  const sampling = rendition.kind === "audio" ? ` audioSamplingRate="48000"` : "";
  const media = `${rendition.name}/seg_$Number%05d$.${segmentExtension(layout.segmentType)}`;
  return (
    `<Representation id="${xmlText(rendition.name)}" bandwidth="${rendition.bandwidth}" codecs="${xmlText(segments.codecs)}"${size}${rate}${sampling}>` +
    `<SegmentTemplate timescale="${TIMESCALE}" presentationTimeOffset="${MEDIA_OFFSET_SECONDS * TIMESCALE}" startNumber="0" initialization="${rendition.name}/${INIT_SEGMENT}" media="${media}">` +
    `<SegmentTimeline>${timeline(segments)}</SegmentTimeline></SegmentTemplate></Representation>`
  );
}

/** The stream's length: the longest rendition's segments together. */
const lengthOf = (segments: ReadonlyMap<string, RenditionSegments>) =>
  Math.max(0, ...[...segments.values()].map((s) => s.durations.reduce((sum, d) => sum + d, 0)));

/** The MPD over the segments stored so far of each rendition (by name). */
export function mpd(
  layout: StreamLayout,
  segments: ReadonlyMap<string, RenditionSegments>,
  options: MpdOptions,
): string {
  const sets = (["video", "audio"] as const).flatMap((kind) => {
    const renditions = layout.renditions.filter((r) => r.kind === kind);
    if (renditions.length === 0) return [];
    const attributes =
      kind === "video"
        ? `contentType="video" mimeType="video/mp4" segmentAlignment="true" startWithSAP="1"`
        : `contentType="audio" mimeType="audio/mp4" segmentAlignment="true" startWithSAP="1" lang="und"`;
    const body = renditions
      .map((r) => representation(layout, r, segments.get(r.name) ?? { codecs: "", durations: [] }))
      .join("");
    return [`<AdaptationSet id="${kind === "video" ? 0 : 1}" ${attributes}>${body}</AdaptationSet>`];
  });
  const duration = lengthOf(segments);
  // A dynamic MPD's player needs the server's clock: given in the MPD itself, as it is written.
  const clock = options.ended
    ? ""
    : `<UTCTiming schemeIdUri="urn:mpeg:dash:utc:direct:2014" value="${options.now.toISOString()}"/>`;
  const head = options.ended
    ? `type="static" mediaPresentationDuration="${seconds(duration)}"`
    : `type="dynamic" availabilityStartTime="${options.startedAt.toISOString()}" publishTime="${options.now.toISOString()}" ` +
      `minimumUpdatePeriod="${seconds(layout.segmentSeconds)}" suggestedPresentationDelay="${seconds(3 * layout.segmentSeconds)}"`;
  return (
    `<?xml version="1.0" encoding="UTF-8"?>\n` +
    `<MPD xmlns="urn:mpeg:dash:schema:mpd:2011" profiles="urn:mpeg:dash:profile:isoff-live:2011" ${head} minBufferTime="${seconds(layout.segmentSeconds)}">` +
    `<Period id="0" start="PT0S">${sets.join("")}</Period>${clock}</MPD>\n`
  );
}
