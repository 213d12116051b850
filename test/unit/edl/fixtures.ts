/** Builders for small EDL documents: valid by default, so each test changes one thing. */
import type { PlanId } from "../../../domain/plans";
import { validateEdl } from "../../../domain/edl/validate";

export const media = (name: string) => `https://media.example.com/${name}`;

let counter = 0;
const nextId = (prefix: string) => `${prefix}${++counter}`;

export function videoClip(fields: Record<string, unknown> = {}) {
  return { id: nextId("v"), src: media("a.mp4"), in: 0, out: 10, startTime: 0, ...fields };
}

export function overlayClip(fields: Record<string, unknown> = {}) {
  return { id: nextId("o"), src: media("logo.png"), startTime: 0, duration: 5, ...fields };
}

export function textClip(fields: Record<string, unknown> = {}) {
  return { id: nextId("t"), text: "Hello", startTime: 0, duration: 5, ...fields };
}

export const track = (type: string, clips: unknown[]) => ({ type, clips });

export function edl(tracks: unknown[], extra: Record<string, unknown> = {}) {
  return { version: "1.0", timeline: { tracks }, ...extra };
}

/** One video track holding `clips`. */
export const videoEdl = (...clips: unknown[]) => edl([track("video", clips)]);

/** A valid one-clip timeline plus one extra track. */
export const withTrack = (type: string, clips: unknown[]) => edl([track("video", [videoClip()]), track(type, clips)]);

export const withOutput = (output: unknown) => edl([track("video", [videoClip()])], { output });

/** Errors on the most permissive plan, so only field rules show. */
export const errorsOf = (document: unknown, plan: PlanId = "enterprise") => validateEdl(document, plan).errors;

export const CLIP0 = "timeline.tracks[0].clips[0]";
export const EXTRA0 = "timeline.tracks[1].clips[0]";
