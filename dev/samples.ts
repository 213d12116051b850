import { execFile } from "node:child_process";
import { once } from "node:events";
import { access, mkdir, rename, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { promisify } from "node:util";
import { EDL_LIMITS } from "../domain/edl/limits";
import type { PlanId } from "../domain/plans";

const run = promisify(execFile);

export const SAMPLE_CLIP = "sample.mp4";
export const SAMPLE_LOGO = "logo.png";
const SAMPLE_TIMELINE = "timeline.json";

/**
 * What `npm run dev` serves for its printed examples: a 10 s 720p clip with a tone and a logo
 * with transparency, made once with FFmpeg's lavfi sources (nothing committed, nothing fetched).
 * Aborting `signal` kills FFmpeg and removes what it had begun.
 */
export async function prepareSampleMedia(dir: string, signal?: AbortSignal): Promise<void> {
  await mkdir(dir, { recursive: true });
  await makeOnce(signal, join(dir, SAMPLE_CLIP), "mp4", [
    "-f",
    "lavfi",
    "-i",
    "testsrc2=size=1280x720:rate=30:duration=10",
    "-f",
    "lavfi",
    "-i",
    "sine=frequency=440:sample_rate=48000:duration=10",
    "-ac",
    "2",
    "-c:v",
    "libx264",
    "-preset",
    "veryfast",
    "-crf",
    "26",
    "-pix_fmt",
    "yuv420p",
    "-g",
    "60",
    "-c:a",
    "aac",
    "-b:a",
    "128k",
    "-movflags",
    "+faststart",
  ]);
  // An orange disc with a white ring on a transparent square: no font needed.
  await makeOnce(signal, join(dir, SAMPLE_LOGO), "image2", [
    "-f",
    "lavfi",
    "-i",
    "color=c=black:size=256x256,format=rgba",
    "-vf",
    "geq=r=255:g='if(lt(hypot(X-128,Y-128),96),140,255)':b='if(lt(hypot(X-128,Y-128),96),0,255)':a='if(lt(hypot(X-128,Y-128),120),255,0)'",
    "-frames:v",
    "1",
    "-c:v",
    "png",
  ]);
}

/** Made under another name and renamed into place, so a run stopped halfway leaves nothing half-made. */
async function makeOnce(signal: AbortSignal | undefined, path: string, format: string, args: string[]): Promise<void> {
  if (
    await access(path).then(
      () => true,
      () => false,
    )
  )
    return;
  const partial = `${path}.${process.pid}.partial`;
  const making = run("ffmpeg", ["-hide_banner", "-loglevel", "error", "-y", ...args, "-f", format, partial], {
    signal,
  });
  try {
    await making;
    await rename(partial, path);
  } finally {
    // An abort rejects at once, while FFmpeg may still be writing: wait for it to be gone, so
    // neither it nor a file it writes outlives the partial's removal (or the run's exit).
    const { child } = making;
    if (child.exitCode === null && child.signalCode === null) await once(child, "close");
    await rm(partial, { force: true });
  }
}

/**
 * A small timeline on the sample clip and logo that the plan accepts: the clip cut in two (the
 * second part at half speed) under the logo, and on plans with more than two tracks a title.
 * The body of PUT and POST /api/v1/edl alike.
 */
function sampleTimeline(plan: PlanId, urls: { clip: string; logo: string }) {
  const tracks: object[] = [
    {
      type: "video",
      clips: [
        { id: "opening", src: urls.clip, in: 0, out: 4, startTime: 0 },
        { id: "slow-motion", src: urls.clip, in: 6, out: 8, startTime: 4, speed: 0.5 },
      ],
    },
    {
      type: "overlay",
      clips: [
        {
          id: "logo",
          src: urls.logo,
          startTime: 0,
          duration: 8,
          position: { x: "right", y: "top" },
          size: { width: "12%" },
          opacity: 0.85,
          fadeIn: 0.5,
        },
      ],
    },
  ];
  if (EDL_LIMITS[plan].tracks > tracks.length) {
    tracks.push({
      type: "text",
      clips: [
        {
          id: "title",
          text: "Rendered from a timeline",
          startTime: 0.5,
          duration: 3,
          fontSize: 56,
          fontWeight: "bold",
          position: { x: "center", y: "bottom" },
          background: { color: "#000000", opacity: 0.5, padding: 16 },
          fadeIn: 0.5,
          fadeOut: 0.5,
        },
      ],
    });
  }
  return {
    edl: { version: "1.0", output: { resolution: "1280x720", fps: 30, container: "mp4" }, timeline: { tracks } },
    metadata: { name: "npm run dev sample timeline" },
  };
}

/** Writes the plan's sample timeline; returns where, and a few words on what it holds. */
export async function writeSampleTimeline(dir: string, plan: PlanId, urls: { clip: string; logo: string }) {
  const path = join(dir, SAMPLE_TIMELINE);
  const body = sampleTimeline(plan, urls);
  await writeFile(path, `${JSON.stringify(body, null, 2)}\n`);
  const tracks = body.edl.timeline.tracks.length;
  const summary =
    tracks > 2
      ? "the clip cut in two, the second part slowed down, under the logo and a title: 3 tracks"
      : `the clip cut in two, the second part slowed down, under the logo: 2 tracks, the most the ${plan} plan allows`;
  return { path, summary };
}
