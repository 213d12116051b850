/**
 * Version 1.0 timelines that between them use every field 1.0 renders, and the five properties
 * 1.0 accepts without applying: the documents whose compiled command must never change
 * (graphs-1.0.golden.json).
 */
import type { TimelineAssets } from "../../../encoder/timeline/compile";
import { fontKey } from "../../../encoder/timeline/compile";
import { validateEdlExamples } from "../../../worker/routes/edl/examples";

const A = "https://media.example.com/a.mp4";
const B = "https://media.example.com/b.mp4";
const SILENT = "https://media.example.com/silent.mp4";
const TONE = "https://media.example.com/tone.m4a";
const LOGO = "https://media.example.com/logo.png";
const CLIP = "https://media.example.com/clip.mp4";

export const GOLDEN_ASSETS: TimelineAssets = {
  media: new Map([
    [A, { path: "/w/a", hasVideo: true, hasAudio: true, width: 1280, height: 720, fps: 25 }],
    [B, { path: "/w/b", hasVideo: true, hasAudio: true, width: 640, height: 480, fps: 30 }],
    [SILENT, { path: "/w/s", hasVideo: true, hasAudio: false, width: 1280, height: 720, fps: 25 }],
    [TONE, { path: "/w/t", hasVideo: false, hasAudio: true }],
    [CLIP, { path: "/w/clip", hasVideo: true, hasAudio: true, width: 1920, height: 1080, fps: 29.97 }],
  ]),
  images: new Map([
    [LOGO, { path: "/w/logo", width: 200, height: 100 }],
    ["https://media.example.com/logo.png", { path: "/w/logo", width: 200, height: 100 }],
  ]),
  fonts: new Map([
    [fontKey({ fontFamily: "Arial", fontWeight: "normal" }), "/fonts/Sans.ttf"],
    [fontKey({ fontFamily: "Arial", fontWeight: "bold" }), "/fonts/Sans-Bold.ttf"],
    [fontKey({ fontFamily: "DejaVu Serif", fontWeight: "normal" }), "/fonts/Serif.ttf"],
  ]),
};

const UNAPPLIED = {
  transform: { scale: 2, rotate: 45, flip: "horizontal" },
  crop: { top: 0.1, left: 0.2 },
  filters: ["blur", { type: "sepia", strength: 0.5 }],
  transition: { in: { type: "crossfade", duration: 1 }, out: { type: "fade", duration: 0.5 } },
  freeze: { at: 1, duration: 2 },
};

const video = (clips: unknown[]) => ({ type: "video", clips });

export const TIMELINES_1_0: Record<string, unknown> = {
  // The reference's valid examples (broken is refused; tooManyTracks only on the free plan).
  "openapi:captioned": validateEdlExamples.captioned.value.edl,
  "openapi:experimental": validateEdlExamples.experimental.value.edl,
  "openapi:tooManyTracks": validateEdlExamples.tooManyTracks.value.edl,
  "speed, gaps, volume, mute, replaceAudio, a silent source, sizes from the first clip": {
    version: "1.0",
    timeline: {
      tracks: [
        video([
          { id: "slow", src: A, in: 1, out: 3, startTime: 0.5, speed: 0.5, volume: -3 },
          { id: "fast", src: B, in: 0, out: 9, startTime: 6, speed: 3 },
          { id: "muted", src: A, in: 2, out: 4, startTime: 9.2, mute: true, replaceAudio: TONE },
          { id: "replaced", src: SILENT, in: 0, out: 2.5, startTime: 11.2, replaceAudio: TONE, volume: 6 },
          { id: "quiet", src: SILENT, in: 0, out: 1, startTime: 14 },
          { id: "overlapped", src: B, in: 0, out: 3, startTime: 14.5 },
        ]),
      ],
    },
  },
  "overlays: every blend mode, fades, sizes, positions partly off the frame": {
    version: "1.0",
    output: { resolution: "640x360", fps: 30 },
    timeline: {
      tracks: [
        video([{ id: "bg", src: A, in: 0, out: 8, startTime: 0 }]),
        {
          type: "overlay",
          clips: ["normal", "multiply", "screen", "overlay", "darken", "lighten"].map((blendMode, i) => ({
            id: `o-${blendMode}`,
            src: LOGO,
            startTime: i,
            duration: 2,
            blendMode,
            opacity: 1 - i / 10,
            fadeIn: i % 2 ? 0.5 : 0,
            fadeOut: i % 3 ? 0.25 : 0,
            position: [
              { x: "left", y: "top" },
              { x: "right", y: "bottom" },
              { x: -50, y: 20 },
              { x: 600, y: 340 },
              { x: "center", y: "center" },
              { x: 10, y: "bottom" },
            ][i],
            size: [
              undefined,
              { width: "25%" },
              { height: 60 },
              { width: 300, height: 50 },
              { width: "10%" },
              undefined,
            ][i],
          })),
        },
      ],
    },
  },
  "text: lines, alignments, keywords, background, outline, shadow, fades, weights": {
    version: "1.0",
    output: { resolution: "1280x720", fps: 24, container: "webm" },
    timeline: {
      tracks: [
        video([{ id: "bg", src: B, in: 0, out: 6, startTime: 0 }]),
        {
          type: "text",
          clips: [
            {
              id: "t1",
              text: "Two\nlines",
              startTime: 0,
              duration: 3,
              fontWeight: "bold",
              textAlign: "left",
              position: { x: 100, y: 50 },
              background: { color: "#102030", opacity: 0.7, padding: 8 },
              fadeIn: 0.5,
              fadeOut: 1,
            },
            {
              id: "t2",
              text: "right\naligned\nthree",
              startTime: 1,
              duration: 4,
              fontFamily: "DejaVu Serif",
              fontSize: 30,
              fontColor: "#FF000080",
              textAlign: "right",
              position: { x: "right", y: "bottom" },
              outline: { color: "#FFFFFF", width: 3 },
              shadow: { color: "#00FF00", offsetX: -2, offsetY: 4, blur: 2 },
            },
            { id: "t3", text: "centre", startTime: 2, duration: 1, position: { x: 640, y: "top" } },
          ],
        },
      ],
    },
  },
  "the five properties 1.0 accepts without applying, on every clip type": {
    version: "1.0",
    output: { resolution: "320x240", fps: 25, crf: 20, videoBitrate: "800k", preset: "fast" },
    timeline: {
      tracks: [
        video([
          { id: "a", src: A, in: 0, out: 3, startTime: 0, ...UNAPPLIED },
          { id: "b", src: B, in: 1, out: 4, startTime: 3, ...UNAPPLIED },
        ]),
        { type: "overlay", clips: [{ id: "o", src: LOGO, startTime: 1, duration: 2, ...UNAPPLIED }] },
        { type: "text", clips: [{ id: "t", text: "Hi", startTime: 0, duration: 2, ...UNAPPLIED }] },
      ],
    },
  },
};
