/**
 * npm run bench:encode — on a generated 60 s 1080p30 source:
 * 1. the whole job (create → completed → downloaded) for mp4_264_720p, mp4_264_1080p and
 *    hls_abr_264_standard, against the bare FFmpeg command with the same arguments, measured in
 *    the same run (target ≤ 1.05; above 1.15 is a defect);
 * 2. the one-process ladder against one FFmpeg per rung, one after another (target ≤ 0.80);
 * 3. the encoder's peak RSS while it runs a job on a 1 GB source (target < 300 MB).
 * Then where each case's best job went: to the encoder's claim, its download, FFmpeg, its upload,
 * the encoder's other steps, the webhook's trip and the client's download.
 */
import { mkdir, mkdtemp, readFile, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { findPreset } from "../domain/presets/catalogue";
import { PRESET_DEFINITIONS } from "../domain/presets/definitions";
import { selectRungs } from "../domain/presets/recipes";
import { buildPresetCommands } from "../encoder/ffmpeg/args";
import { wholeStreamCommand } from "../encoder/ffmpeg/args/stream";
import { probeFile } from "../encoder/ffmpeg/probe";
import { ffmpeg } from "../test/support/media";
import { timeFfmpeg } from "./ffmpeg-time";
import { recordRun, tableRecords } from "./results";
import { startFixtureServer } from "../test/e2e/fixtures";
import { startE2E } from "../test/e2e/harness";
import { bodyOf } from "../test/support/api-client";
import { startWebhookReceiver } from "../test/support/webhook-receiver";

const SOURCE_SECONDS = Number(process.env.BENCH_SOURCE_SECONDS ?? 60);

async function bareSeconds(presetId: string, input: string): Promise<number> {
  const outDir = await mkdtemp(join(tmpdir(), "bare-"));
  const probe = await probeFile(input);
  const plan = buildPresetCommands(presetId, { input, outDir, probe });
  let total = 0;
  for (const step of plan.steps) if (step.kind === "run") total += await timeFfmpeg(step.command.args);
  await rm(outDir, { recursive: true, force: true });
  return total;
}

const fmt = (n: number) => n.toFixed(2);

/** The encoder's stage lines (`job <id>  <stage>  on <encoder>  …`, encoder/jobs/stage-log.ts), kept to break a job's time down. */
const stageLines: string[] = [];

/** Seconds a job's stage lines give: FFmpeg's runs summed, the download, the upload, claim to completion. */
function stagesOf(jobId: string) {
  const lines = stageLines.filter((line) => line.startsWith(`job ${jobId}  `));
  // Read off lines written for people: a change to their wording must fail here, not read as 0 s.
  if (!lines.some((line) => /completed\s+on \S+\s+in [\d.]+ s/.test(line)))
    throw new Error(`no "completed in … s" stage line for job ${jobId}`);
  const secondsIn = (pattern: RegExp) => lines.reduce((sum, line) => sum + Number(pattern.exec(line)?.[1] ?? 0), 0);
  return {
    ffmpeg: secondsIn(/ffmpeg\s+on \S+\s+finished in ([\d.]+) s/),
    download: secondsIn(/download\s+.* in ([\d.]+) s/),
    upload: secondsIn(/upload\s+.* in ([\d.]+) s/),
    inEncoder: secondsIn(/completed\s+on \S+\s+in ([\d.]+) s/),
  };
}

interface JobRun {
  total: number;
  /** Creation to the encoder's claim (QStash's delivery), from the job's own timestamps. */
  toClaim: number;
  stages: ReturnType<typeof stagesOf>;
  /** Completion (the job's completedAt) to the webhook's arrival. */
  toWebhook: number;
  /** The client's download of the output. */
  download: number;
}

const fixtures = await startFixtureServer();
const e2e = await startE2E({
  allowLoopbackSources: true,
  log: (source, line) => source === "encoder" && stageLines.push(line),
});
try {
  console.log(`Generating a ${SOURCE_SECONDS} s 1080p30 source…`);
  const sourceUrl = await fixtures.source("bench.mp4", { seconds: SOURCE_SECONDS, width: 1920, height: 1080 });
  const sourcePath = join(fixtures.dir, "bench.mp4");
  const client = await e2e.client("enterprise");
  // Completion arrives by webhook, as a client should learn it: polling the API would take CPU
  // from the encode being measured.
  const hooks = await startWebhookReceiver();
  await e2e.admin.setWebhook(client.accountId, hooks.url);

  async function runJob(presetId: string): Promise<JobRun> {
    const started = performance.now();
    const created = bodyOf(await client.createJob({ inputUrl: sourceUrl, preset: presetId }), 201);
    const event = JSON.parse((await hooks.waitFor(created.id, 900_000)).body);
    const hookAt = Date.now();
    if (event.status !== "completed") throw new Error(`${presetId}: ${event.errorMessage}`);
    const downloadStarted = performance.now();
    await (await fetch(event.outputUrl)).arrayBuffer();
    const ended = performance.now();
    const { metadata: job } = bodyOf(await client.getJob(created.id), 200);
    const at = (timestamp: string | null) => new Date(timestamp!).getTime();
    return {
      total: (ended - started) / 1000,
      toClaim: (at(job.startedAt) - at(job.createdAt)) / 1000,
      stages: stagesOf(created.id),
      toWebhook: (hookAt - at(job.completedAt)) / 1000,
      download: (ended - downloadStarted) / 1000,
    };
  }

  // Alternating runs, best of ROUNDS each: the machine is shared and noisy.
  const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 2);
  const rows: string[][] = [["case", "our job (s)", "bare FFmpeg (s)", "ratio", "target"]];
  const breakdown: string[][] = [
    [
      "case",
      "our job (s)",
      "to the claim",
      "download",
      "FFmpeg",
      "upload",
      "rest of the encoder's",
      "completion to webhook",
      "client's download",
      "unaccounted",
    ],
  ];
  for (const presetId of ["mp4_264_720p", "mp4_264_1080p", "hls_abr_264_standard"]) {
    let bare = Infinity;
    let best: JobRun | undefined;
    for (let round = 0; round < ROUNDS; round++) {
      bare = Math.min(bare, await bareSeconds(presetId, sourcePath));
      const run = await runJob(presetId);
      if (!best || run.total < best.total) best = run;
    }
    const { total, toClaim, stages, toWebhook, download } = best!;
    rows.push([presetId, fmt(total), fmt(bare), fmt(total / bare), "≤ 1.05"]);
    const encoderRest = stages.inEncoder - stages.download - stages.ffmpeg - stages.upload;
    const unaccounted = total - toClaim - stages.inEncoder - toWebhook - download;
    breakdown.push([
      presetId,
      fmt(total),
      fmt(toClaim),
      fmt(stages.download),
      fmt(stages.ffmpeg),
      fmt(stages.upload),
      fmt(encoderRest),
      fmt(toWebhook),
      fmt(download),
      fmt(unaccounted),
    ]);
  }

  const { recipe } = PRESET_DEFINITIONS.hls_abr_264_standard;
  const probe = await probeFile(sourcePath);
  const ctxFor = async (name: string) => {
    const outDir = join(await mkdtemp(join(tmpdir(), "ladder-")), name);
    await mkdir(outDir, { recursive: true });
    return { presetId: "hls_abr_264_standard", input: sourcePath, outDir, probe };
  };
  // Alternating, best of ROUNDS each, as for the jobs above: one run of each is within the noise.
  let oneProcess = Infinity;
  let perRung = Infinity;
  for (let round = 0; round < ROUNDS; round++) {
    oneProcess = Math.min(oneProcess, await timeFfmpeg(wholeStreamCommand(await ctxFor("all"), recipe, 0).args));
    let rungs = 0;
    for (const rung of selectRungs(recipe.rungs, probe.video!.height)) {
      rungs += await timeFfmpeg(
        wholeStreamCommand(await ctxFor(`r${rung.height}`), { ...recipe, rungs: [rung] }, 0).args,
      );
    }
    perRung = Math.min(perRung, rungs);
  }
  rows.push([
    "ladder: one process vs one per rung",
    fmt(oneProcess),
    fmt(perRung),
    fmt(oneProcess / perRung),
    "≤ 0.80",
  ]);

  console.log("Generating a 1 GB source (raw video in Matroska)…");
  const bigPath = join(fixtures.dir, "big.mkv");
  const frames = Math.ceil(1024 ** 3 / (1280 * 720 * 1.5));
  await ffmpeg([
    "-f",
    "lavfi",
    "-i",
    `testsrc2=size=1280x720:rate=30`,
    "-f",
    "lavfi",
    "-i",
    "sine=frequency=440:sample_rate=48000",
    "-frames:v",
    String(frames),
    "-t",
    String(frames / 30),
    "-c:v",
    "rawvideo",
    "-pix_fmt",
    "yuv420p",
    "-c:a",
    "pcm_s16le",
    bigPath,
  ]);
  const bigBytes = (await stat(bigPath)).size;
  const pid = e2e.stack.encoderPid()!;
  const started = performance.now();
  const created = bodyOf(await client.createJob({ inputUrl: fixtures.url("big.mkv"), preset: "audio_mp3_hq" }), 201);
  const done = JSON.parse((await hooks.waitFor(created.id, 900_000)).body);
  if (done.status !== "completed") throw new Error(`1 GB job: ${done.errorMessage}`);
  const status = await readFile(`/proc/${pid}/status`, "utf8");
  const peakMb = Number(/VmHWM:\s+(\d+) kB/.exec(status)![1]) / 1024;
  rows.push([
    `peak RSS of the encoder, ${(bigBytes / 1024 ** 3).toFixed(2)} GB source (${fmt((performance.now() - started) / 1000)} s)`,
    `${peakMb.toFixed(0)} MB`,
    "",
    "",
    "< 300 MB",
  ]);

  console.log(
    `\nEncode benchmark (${SOURCE_SECONDS} s 1080p30 source, ${findPreset("mp4_264_720p")!.specifications.resolution} etc.)\n`,
  );
  for (const row of rows) console.log(`| ${row.join(" | ")} |`);
  console.log(
    `\nWhere each case's best job went (s; the encoder's stage lines and the job's timestamps, whole milliseconds)\n`,
  );
  for (const row of breakdown) console.log(`| ${row.join(" | ")} |`);
  recordRun(
    "encode",
    { sourceSeconds: SOURCE_SECONDS, rounds: ROUNDS },
    { cases: tableRecords(rows), bestJobs: tableRecords(breakdown) },
  );
  await hooks.stop();
} finally {
  await e2e.stop();
  await fixtures.stop();
}
