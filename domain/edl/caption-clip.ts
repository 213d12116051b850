/** The caption track's clips (version 1.1; docs/timelines.md), with the fields of ./field-tables-1-1.ts. */
import { type ClipReading, readStyle } from "./clips";
import { allRead, type Issues, type JsonObject } from "./fields";
import { CAPTION_FIELDS } from "./field-tables-1-1";
import { fieldsOf } from "./kinds";
import { type CaptionClip, captionClipEnd } from "./validated-edl";

/**
 * Drawn with enable windows, so the order is the encoder's to rely on: cues sorted by start,
 * which every subtitle file already is.
 */
function checkOrder(cues: { start: number }[], fail: (key: string, message: string) => undefined): void {
  cues.forEach((cue, i) => {
    if (i > 0 && cue.start < cues[i - 1].start)
      fail(`cues[${i}].start`, `must not be before the previous cue's start, ${cues[i - 1].start}`);
  });
}

/**
 * Complexity points (./complexity.ts): one per ten cues, each a drawtext idle outside its
 * window. A file's cues are counted by the encoder, so it is taken as a typical 100.
 */
const ASSUMED_FILE_CUES = 100;
const captionEffects = (cues: unknown[] | undefined) => Math.ceil((cues?.length ?? ASSUMED_FILE_CUES) / 10);

export function readCaptionClip(source: JsonObject, path: string, issues: Issues): ClipReading<CaptionClip> {
  const before = issues.errors.length;
  const f = fieldsOf(source, path, issues, CAPTION_FIELDS);
  const id = f.read("id");
  const startTime = f.read("startTime");
  const src = f.read("src");
  const cues = f.read("cues");
  if (f.has("src") === f.has("cues")) issues.errors.push(`${path}: must have exactly one of src and cues`);
  if (cues?.length === 0) f.fail("cues", "must hold at least one cue");
  if (cues) checkOrder(cues, f.fail);
  const style = readStyle(f);

  const required = issues.errors.length === before ? allRead({ id }) : undefined;
  const end = captionClipEnd({ startTime, cues });
  return {
    clip: required
      ? {
          ...required,
          startTime,
          ...(src && { src }),
          ...(cues && { cues }),
          ...style,
        }
      : undefined,
    // A caption file's cues are the encoder's to read, so it spans nothing the timeline knows of.
    span: cues?.length ? { start: startTime + cues[0].start, end } : undefined,
    urls: src ? [src] : [],
    speedChange: false,
    blend: false,
    features: ["captions"],
    effects: captionEffects(cues),
  };
}
