import { MAX_CAPTION_BYTES } from "../../domain/captions";
import type { TextClip, ValidatedEdl } from "../../domain/edl/validated-edl";
import { fontKey } from "./compile";
import { ffSeconds } from "./time";

type AssetUse = { as: "media" | "image" | "caption"; clipId: string };

/** One distinct asset URL: downloaded once, then probed for each way the timeline uses it. */
export interface AssetNeed {
  url: string;
  /**
   * As media (a clip's source or replacement audio), as an overlay image and/or as a caption
   * file, each with the first clip that uses it so, which its errors name.
   */
  uses: AssetUse[];
}

/**
 * The largest overlay image downloaded: a 4K PNG with alpha is about 30 MiB. FFmpeg decodes it,
 * so this keeps a job's disk use, not the encoder's memory, in bounds (the pixel limit does that).
 */
export const MAX_IMAGE_BYTES = 64 * 1024 * 1024;

/** The download cap of an asset: the narrowest of its uses' (a caption file is read into memory whole). */
export function assetCap(need: AssetNeed, sourceBytes: number): { maxBytes: number; capOn: string } {
  if (need.uses.some((u) => u.as === "caption"))
    return { maxBytes: Math.min(MAX_CAPTION_BYTES, sourceBytes), capOn: "caption files" };
  if (need.uses.some((u) => u.as === "image"))
    return { maxBytes: Math.min(MAX_IMAGE_BYTES, sourceBytes), capOn: "overlay images" };
  return { maxBytes: sourceBytes, capOn: "sources" };
}

/**
 * The assets a timeline needs, each distinct URL once whatever it is used as. A muted clip's
 * replaceAudio is left out: the compiler gives a muted clip silence and never opens it.
 */
export function planAssets(edl: ValidatedEdl): AssetNeed[] {
  const needs = new Map<string, AssetNeed>();
  const use = (url: string, as: AssetUse["as"], clipId: string) => {
    const need = needs.get(url) ?? { url, uses: [] };
    if (!need.uses.some((u) => u.as === as)) need.uses.push({ as, clipId });
    needs.set(url, need);
  };
  for (const track of edl.timeline.tracks) {
    if (track.type === "video") {
      for (const clip of track.clips) {
        use(clip.src, "media", clip.id);
        if (clip.replaceAudio && !clip.mute) use(clip.replaceAudio, "media", clip.id);
      }
    }
    if (track.type === "overlay") for (const clip of track.clips) use(clip.src, "image", clip.id);
    if (track.type === "caption") for (const clip of track.clips) if (clip.src) use(clip.src, "caption", clip.id);
  }
  return [...needs.values()];
}

/** The fonts the text and caption clips need, each family and weight once: one fontconfig lookup apiece. */
export function planFonts(edl: ValidatedEdl): Pick<TextClip, "fontFamily" | "fontWeight">[] {
  const fonts = new Map<string, Pick<TextClip, "fontFamily" | "fontWeight">>();
  for (const track of edl.timeline.tracks) {
    if (track.type !== "text" && track.type !== "caption") continue;
    for (const { fontFamily, fontWeight } of track.clips)
      fonts.set(fontKey({ fontFamily, fontWeight }), { fontFamily, fontWeight });
  }
  return [...fonts.values()];
}

/** Video clips whose in-point is at or past the end of their source, by the probed durations. */
export function inPointErrors(edl: ValidatedEdl, durations: ReadonlyMap<string, number>): string[] {
  return edl.timeline.tracks.flatMap((track) =>
    track.type !== "video"
      ? []
      : track.clips.flatMap((clip) => {
          const duration = durations.get(clip.src);
          if (duration === undefined || clip.in < duration) return [];
          return [
            `Clip "${clip.id}" starts at ${ffSeconds(clip.in)} s into its source, but the source is only ${ffSeconds(duration)} s long`,
          ];
        }),
  );
}
