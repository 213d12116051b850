/**
 * npm run bench:playable: how soon a streaming job plays (docs/benchmarks.md#benchplayable).
 *
 * For 1080p sources of 1, 10 and 60 minutes (one minute encoded, the longer ones that minute
 * copied end to end: the same bytes a second, no encode to wait for), served by ranges on
 * loopback, and the ladders hls_abr_264_standard and dash_abr_264_standard, on `npm run dev`'s
 * stack with two encoders: the time from POST /jobs to the playback link given, and to first
 * playable (the link given and the first segment of every rendition fetched through it, as a
 * player's first requests are). Beside it, each job's total: waited for on the lengths in
 * BENCH_WAIT_MINUTES (1 by default), estimated for the others from their progress over
 * BENCH_PROGRESS_SECONDS after first playable, then cancelled.
 *
 * The ceiling, measured in the same run: bare FFmpeg making the ladder's first segment (one
 * keyframe interval, every rung) from the same source on one core, the least a first segment
 * can cost here, and on both (a first part alone on a Machine of two, the production model's).
 * Targets: first playable within 10 s for every length; the 60-minute source's within 1.3 times
 * the 1-minute source's.
 */
import { execFile } from "node:child_process";
import { copyFile, mkdir, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Parser } from "m3u8-parser";
import { parse as parseMpd } from "mpd-parser";
import { selectRungs } from "../domain/presets/recipes";
import { streamRecipe } from "../domain/stream/layout";
import { wholeStreamCommand } from "../encoder/ffmpeg/args/stream";
import { probeFile } from "../encoder/ffmpeg/probe";
import { startFixtureServer } from "../test/e2e/fixtures";
import { startE2E } from "../test/e2e/harness";
import { bodyOf } from "../test/support/api-client";
import { madeOnce } from "../test/support/media-cache";
import { ffmpeg } from "../test/support/media";
import { timeFfmpeg } from "./ffmpeg-time";
import { recordRun } from "./results";

const LENGTHS = (process.env.BENCH_LENGTHS ?? "1,10,60").split(",").map(Number);
const WAIT_FOR_TOTAL = new Set((process.env.BENCH_WAIT_MINUTES ?? "1").split(",").map(Number));
const PROGRESS_SECONDS = Number(process.env.BENCH_PROGRESS_SECONDS ?? 60);
const PRESETS = (process.env.BENCH_PRESETS ?? "hls_abr_264_standard,dash_abr_264_standard").split(",");
const TARGET_SECONDS = 10;
const TARGET_RATIO = 1.3;

const dir = join(tmpdir(), "bench-playable");
await mkdir(dir, { recursive: true });

/** One minute of 1080p30 at a camera's rate (5 Mbit/s, a keyframe every 2 s), with a tone. */
const minute = join(dir, "minute.mp4");
const minuteArgs = [
  "-f",
  "lavfi",
  "-i",
  "testsrc2=size=1920x1080:rate=30:duration=60",
  "-f",
  "lavfi",
  "-i",
  "sine=frequency=440:duration=60",
  "-c:v",
  "libx264",
  "-preset",
  "ultrafast",
  "-b:v",
  "5M",
  "-maxrate",
  "5M",
  "-bufsize",
  "10M",
  "-g",
  "60",
  "-pix_fmt",
  "yuv420p",
  "-c:a",
  "aac",
  "-shortest",
  "-movflags",
  "+faststart",
];
await madeOnce(minute, { benchPlayableMinute: minuteArgs }, (path) => ffmpeg([...minuteArgs, path]));

/** The minute copied end to end `minutes` times: a long source made in seconds. */
async function sourceOf(minutes: number): Promise<string> {
  const path = join(dir, `source-${minutes}.mp4`);
  if (minutes === 1) {
    await copyFile(minute, path);
    return path;
  }
  await madeOnce(path, { benchPlayableMinutes: minutes, minuteArgs }, async (draft) => {
    const list = join(dir, `list-${minutes}.txt`);
    await writeFile(list, Array.from({ length: minutes }, () => `file '${minute}'`).join("\n"));
    await ffmpeg(["-f", "concat", "-safe", "0", "-i", list, "-c", "copy", "-movflags", "+faststart", draft]);
  });
  return path;
}

function mediaPlaylistUris(master: string, base: string): string[] {
  const parser = new Parser();
  parser.push(master);
  parser.end();
  const { playlists = [], mediaGroups } = parser.manifest;
  const audio = Object.values(mediaGroups?.AUDIO ?? {}).flatMap((group) => Object.values(group).map((r) => r.uri));
  return [...playlists.map((p) => p.uri), ...audio].map((uri) => new URL(uri, base).toString());
}

function firstSegmentOf(playlist: string, base: string): string[] {
  const parser = new Parser();
  parser.push(playlist);
  parser.end();
  const first = parser.manifest.segments[0];
  if (!first) throw new Error(`${base} lists no segment`);
  return [...(first.map ? [new URL(first.map.uri, base).toString()] : []), new URL(first.uri, base).toString()];
}

/** A player's first requests: the manifest, then each rendition's playlist and its first segment (and init). */
async function fetchFirstSegments(link: string): Promise<void> {
  const get = async (url: string) => {
    const res = await fetch(url);
    if (!res.ok) throw new Error(`${url} answered ${res.status}`);
    return res;
  };
  const manifest = await (await get(link)).text();
  let urls: string[];
  if (link.endsWith(".mpd")) {
    const mpd = parseMpd(manifest, { manifestUri: link });
    const audio = Object.values(mpd.mediaGroups.AUDIO).flatMap((g) => Object.values(g).flatMap((r) => r.playlists));
    urls = [...mpd.playlists, ...audio].flatMap((p) => [
      ...(p.segments[0]?.map ? [p.segments[0].map.resolvedUri] : []),
      p.segments[0].resolvedUri,
    ]);
  } else {
    const playlists = mediaPlaylistUris(manifest, link);
    urls = (await Promise.all(playlists.map(async (url) => firstSegmentOf(await (await get(url)).text(), url)))).flat();
  }
  await Promise.all(urls.map(async (url) => (await get(url)).arrayBuffer()));
}

/** Until the job has ended (vitest's waits are not there outside a test run). */
async function finished(id: string): Promise<void> {
  for (;;) {
    const job = bodyOf(await client.getJob(id), 200);
    if (job.status === "completed") return;
    if (job.status === "failed" || job.status === "cancelled") throw new Error(`${job.preset}: ${job.errorMessage}`);
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}

/**
 * Until no FFmpeg runs on the machine: a cancelled job's tasks stop at their next heartbeat, and
 * each job is measured arriving at an idle pool.
 */
async function idle(): Promise<void> {
  const running = () => new Promise<boolean>((resolve) => execFile("pgrep", ["-x", "ffmpeg"], (err) => resolve(!err)));
  const until = performance.now() + 60_000;
  while ((await running()) && performance.now() < until) await new Promise((resolve) => setTimeout(resolve, 200));
}

/** The encoders' job-stage lines, printed for each job with BENCH_VERBOSE=1. */
const stageLines: { at: number; line: string }[] = [];
const e2e = await startE2E({
  allowLoopbackSources: true,
  encoders: 2,
  // As npm run dev runs its encoders: only the bench's own requests share the cores.
  env: { SESSION_NICENESS: "true" },
  log: (from, line) =>
    from === "encoder" && line.startsWith("job ") && stageLines.push({ at: performance.now(), line }),
});
const fixtures = await startFixtureServer();
const client = await e2e.client("enterprise");
try {
  const rows: {
    minutes: number;
    preset: string;
    linkAt: number;
    playableAt: number;
    total: number;
    totalMeasured: boolean;
  }[] = [];

  // The ceiling: bare FFmpeg making one keyframe interval of every rung of the ladder, on one core.
  const recipe = streamRecipe(PRESETS[0]);
  if (!recipe) throw new Error(`${PRESETS[0]} is not a streaming preset`);
  const probe = await probeFile(minute);
  const ceilingDir = join(dir, "ceiling");
  await mkdir(ceilingDir, { recursive: true });
  const firstSegment = wholeStreamCommand(
    { presetId: PRESETS[0], input: minute, outDir: ceilingDir, probe },
    { ...recipe, rungs: selectRungs(recipe.rungs, probe.video?.height ?? 1080) },
    0,
    { path: minute, options: ["-t", String(recipe.gopSeconds)] },
  );
  const ceiling = await timeFfmpeg(firstSegment.args, { cpu: "0" });
  // The same on both cores: what a first part costs alone on a Machine of two (encoder/fly.toml's).
  const ceilingTwoCores = await timeFfmpeg(firstSegment.args, { cpu: "0,1" });

  for (const minutes of LENGTHS) {
    const source = await sourceOf(minutes);
    const name = source.slice(dir.length + 1);
    await copyFile(source, join(fixtures.dir, name));
    for (const preset of PRESETS) {
      const t0 = performance.now();
      const id = bodyOf(await client.createJob({ inputUrl: fixtures.url(name), preset }), 201).id;
      let link: string | null = null;
      while (!link) {
        const job = bodyOf(await client.getJob(id), 200);
        if (job.status === "failed" || job.status === "cancelled") throw new Error(`${preset}: ${job.errorMessage}`);
        link = job.playbackUrl;
        if (!link) await new Promise((resolve) => setTimeout(resolve, 50));
      }
      const linkAt = (performance.now() - t0) / 1000;
      await fetchFirstSegments(link);
      const playableAt = (performance.now() - t0) / 1000;
      let total: number;
      const measured = WAIT_FOR_TOTAL.has(minutes);
      if (measured) {
        await finished(id);
        total = (performance.now() - t0) / 1000;
      } else {
        const before = bodyOf(await client.getJob(id), 200).progress ?? 0;
        const from = performance.now();
        await new Promise((resolve) => setTimeout(resolve, PROGRESS_SECONDS * 1000));
        const after = bodyOf(await client.getJob(id), 200).progress ?? 0;
        const rate = (after - before) / ((performance.now() - from) / 1000);
        total = (performance.now() - t0) / 1000 + (rate > 0 ? (1 - after) / rate : Number.POSITIVE_INFINITY);
        await client.cancelJob(id);
      }
      await idle();
      rows.push({ minutes, preset, linkAt, playableAt, total, totalMeasured: measured });
      if (process.env.BENCH_VERBOSE)
        for (const { at, line } of stageLines.filter((l) => l.line.includes(id)))
          console.log(`  ${((at - t0) / 1000).toFixed(2).padStart(7)} s  ${line}`);
      console.log(
        `${String(minutes).padStart(3)} min  ${preset.padEnd(24)} link ${linkAt.toFixed(2)} s  first playable ${playableAt.toFixed(2)} s  total ${total.toFixed(0)} s${measured ? "" : " (estimated)"}`,
      );
    }
  }

  console.log(
    `\nceiling: bare FFmpeg's first segment (every rung, ${recipe.gopSeconds} s): ${ceiling.toFixed(2)} s on one core, ${ceilingTwoCores.toFixed(2)} s on two`,
  );
  const verdicts: Record<string, unknown> = {};
  for (const preset of PRESETS) {
    const of = (minutes: number) => rows.find((r) => r.preset === preset && r.minutes === minutes);
    const worst = Math.max(...rows.filter((r) => r.preset === preset).map((r) => r.playableAt));
    const ratio = (of(60)?.playableAt ?? Number.NaN) / (of(1)?.playableAt ?? Number.NaN);
    verdicts[preset] = { worstFirstPlayable: worst, ratio60to1: ratio };
    console.log(
      `${preset}: first playable at most ${worst.toFixed(2)} s (target ≤ ${TARGET_SECONDS}: ${worst <= TARGET_SECONDS ? "met" : "missed"}); 60 min / 1 min = ${ratio.toFixed(2)} (target ≤ ${TARGET_RATIO}: ${ratio <= TARGET_RATIO ? "met" : "missed"})`,
    );
  }
  recordRun(
    "playable",
    { lengths: LENGTHS, presets: PRESETS, waitForTotal: [...WAIT_FOR_TOTAL], progressSeconds: PROGRESS_SECONDS },
    { ceiling, ceilingTwoCores, rows, verdicts },
  );
} finally {
  await fixtures.stop();
  await e2e.stop();
}
