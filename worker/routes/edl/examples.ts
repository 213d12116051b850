/**
 * Timelines the reference shows, and the service's own verdicts on them, computed with the same
 * validator the routes use. Request and response examples share names (see the replay test).
 */
import { validateEdl } from "../../../domain/edl/validate";
import type { PlanId } from "../../../domain/plans";
import { ApiError } from "../../errors";
import { EXAMPLE_JOB_IDS } from "../jobs/examples";
import { presentCreatedEdl, presentEdlVerdict } from "./present";
import { edlValidationFailed } from "./schema";

const CLIP = "https://media.example.com/clip.mp4";
const LOGO = "https://media.example.com/logo.png";

const captioned = {
  version: "1.0",
  output: { resolution: "1280x720", fps: 30 },
  timeline: {
    tracks: [
      {
        type: "video",
        clips: [
          { id: "intro", src: CLIP, in: 0, out: 4, startTime: 0 },
          { id: "fast", src: CLIP, in: 4, out: 10, startTime: 4, speed: 2, volume: -6 },
        ],
      },
      {
        type: "text",
        clips: [
          {
            id: "title",
            text: "Spring launch",
            startTime: 0.5,
            duration: 3,
            fontSize: 64,
            fontWeight: "bold",
            position: { x: "center", y: "bottom" },
            background: { color: "#000000", opacity: 0.5, padding: 16 },
            fadeIn: 0.5,
            fadeOut: 0.5,
          },
        ],
      },
    ],
  },
};

const withLogo = {
  ...captioned,
  timeline: {
    tracks: [
      ...captioned.timeline.tracks,
      {
        type: "overlay",
        clips: [
          {
            id: "logo",
            src: LOGO,
            startTime: 0,
            duration: 7,
            position: { x: "right", y: "top" },
            size: { width: "15%" },
            opacity: 0.8,
          },
        ],
      },
    ],
  },
};

const experimental = {
  version: "1.0",
  timeline: {
    tracks: [
      { type: "video", clips: [{ id: "a", src: CLIP, in: 0, out: 5, startTime: 0, transform: { rotate: 90 } }] },
    ],
  },
};

const broken = {
  version: "1.0",
  timeline: {
    tracks: [
      {
        type: "video",
        clips: [
          { id: "a", src: CLIP, in: 5, out: 2, startTime: 0 },
          { id: "a", src: CLIP, in: 0, out: 2, startTime: 3 },
        ],
      },
    ],
  },
};

/**
 * Version 1.1 (docs/timelines.md, version 1.1): five 4 s shots joined by half-second crossfades
 * (each starts where the previous ends, less the crossfade: 18 s in all), the middle one in
 * greyscale, the last fading to black, under inline captions. Six clips: a Pro timeline.
 */
const crossfade = { in: { type: "crossfade", duration: 0.5 } };
const transitions = {
  version: "1.1",
  output: { resolution: "1280x720", fps: 30 },
  timeline: {
    tracks: [
      {
        type: "video",
        clips: [
          { id: "shot1", src: CLIP, in: 0, out: 4, startTime: 0 },
          { id: "shot2", src: CLIP, in: 4, out: 8, startTime: 3.5, transition: crossfade },
          { id: "shot3", src: CLIP, in: 8, out: 12, startTime: 7, transition: crossfade, filters: ["greyscale"] },
          { id: "shot4", src: CLIP, in: 12, out: 16, startTime: 10.5, transition: crossfade },
          {
            id: "shot5",
            src: CLIP,
            in: 16,
            out: 20,
            startTime: 14,
            transition: { ...crossfade, out: { type: "fade", duration: 1 } },
          },
        ],
      },
      {
        type: "caption",
        clips: [
          {
            id: "subtitles",
            cues: [
              { start: 0.5, end: 3.5, text: "Spring launch" },
              { start: 7, end: 10, text: "Everything\nin black and white" },
              { start: 14, end: 17, text: "Available now" },
            ],
            fontSize: 40,
          },
        ],
      },
    ],
  },
};

export const EDL_EXAMPLE_PLAN: PlanId = "free";

const verdict = (edl: unknown, plan: PlanId = EDL_EXAMPLE_PLAN) => presentEdlVerdict(validateEdl(edl, plan), plan);

export const validateEdlExamples = {
  captioned: { summary: "Two clips and a caption", value: { edl: captioned } },
  experimental: { summary: "An accepted-but-not-applied property", value: { edl: experimental } },
  tooManyTracks: { summary: "Video, text and an overlay: three tracks, over Starter's two", value: { edl: withLogo } },
  broken: { summary: "out before in, and a clip id used twice", value: { edl: broken } },
  transitions: {
    summary: "Version 1.1: five shots with crossfades, a filter and captions (6 clips: on Pro)",
    value: { edl: transitions },
  },
};

/** Each verdict is the Starter plan's, but the 1.1 example's, whose six clips are Pro's. */
export const edlValidationExamples = Object.fromEntries(
  Object.entries(validateEdlExamples).map(([name, { summary, value }]) => [
    name,
    { summary, value: verdict(value.edl, name === "transitions" ? "pro" : EDL_EXAMPLE_PLAN) },
  ]),
);

export const createEdlExamples = {
  captioned: {
    summary: "Two clips and a caption",
    value: { edl: captioned, metadata: { name: "Launch teaser", description: "16:9 cut" } },
  },
  experimental: validateEdlExamples.experimental,
  tooManyTracks: validateEdlExamples.tooManyTracks,
  broken: validateEdlExamples.broken,
};

const created = (edl: unknown) =>
  presentCreatedEdl(
    { id: EXAMPLE_JOB_IDS.queued, createdAt: "2026-11-20T09:30:00.000Z", remainingJobs: 9 },
    validateEdl(edl, EDL_EXAMPLE_PLAN),
    {
      plan: EDL_EXAMPLE_PLAN,
      webhookUrl: null,
    },
  );

export const createdEdlExamples = {
  captioned: { summary: "Queued", value: created(captioned) },
  experimental: { summary: "Queued, with a warning", value: created(experimental) },
};

const refused = (edl: unknown) => edlValidationFailed(validateEdl(edl, EDL_EXAMPLE_PLAN).errors).body;

export const createEdlRefusals = {
  tooManyTracks: { summary: "Over the plan's track limit", value: refused(withLogo) },
  broken: { summary: "Invalid clip fields", value: refused(broken) },
  missingEdl: {
    summary: "A body without edl",
    value: ApiError.validation([{ field: "edl", message: "Invalid input" }]).body,
  },
};
