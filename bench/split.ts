/**
 * npm run bench:split — split encoding (docs/scaling.md) on a generated 120 s 1080p30 source with
 * music-like sound (BENCH_SPLIT_SECONDS), mp4_264_720p, all in one run:
 * 1. the ceiling, bare FFmpeg: (a) the unsplit command on one core; (b) the same split by hand
 *    with the encoder's own builders (the plan, the pieces, the parts and the audio's task two at
 *    a time on the two cores, the join). (b)/(a) is the most a split on two cores can give;
 * 2. the job end to end (create → completed by webhook → output downloaded): (c) one encoder held
 *    to one core, unsplit; (d) the same, split; (e) two encoders, each held to its own core, split.
 *    Targets: (e)/(c) ≤ 0.55 (or within 0.05 of the ceiling when it is above 0.50); (d)/(c) ≤ 1.05;
 * 3. where (e)'s time went, from the encoder's stage lines (encoder/jobs/stage-log.ts);
 * 4. a model from those costs: the time to output of a 10 and a 60 minute source on N encoders,
 *    and the audio's task timed on a pure tone, the AAC encoder's slowest sound.
 * Encoders run with CONCURRENCY=1, as on Fly. BENCH_ROUNDS=N runs N rounds (4 by default) of every
 * case; every other round runs its steps in the reverse order, so the host's drift over minutes
 * does not favour one side. The verdicts go on the medians of each round's own ratios, whose cases
 * ran under the same load; the best of each case is printed beside them. Then BENCH_PAIRED_ROUNDS
 * (4) rounds of (c) and (d) at the same moment, one on each core, swapped every round: a second
 * measure of (d)/(c) that this host's drift, which moves sequential rounds by ±20%, cannot split.
 */
import { execFile } from "node:child_process";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import type { SplitPlan } from "../domain/split";
import { buildPresetCommands } from "../encoder/ffmpeg/args";
import {
  audioPieceCommand,
  audioTaskCommand,
  concatList,
  joinCommand,
  partCommand,
  piecesCommand,
} from "../encoder/ffmpeg/args/split";
import { type ProbedSource, type ProbeSummary, probeSource } from "../encoder/ffmpeg/probe";
import { readSplitFacts } from "../encoder/split/facts";
import { planSplit, splittableRecipe } from "../encoder/split/plan";
import { startFixtureServer } from "../test/e2e/fixtures";
import { type Client, type E2E, startE2E } from "../test/e2e/harness";
import { bodyOf } from "../test/support/api-client";
import { ffmpeg } from "../test/support/media";
import { startWebhookReceiver } from "../test/support/webhook-receiver";
import { timeFfmpeg } from "./ffmpeg-time";
import { recordRun } from "./results";

const SOURCE_SECONDS = Number(process.env.BENCH_SPLIT_SECONDS ?? 120);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 4);
/** Rounds of (c) and (d) run at the same moment, each on a core of its own. */
const PAIRED_ROUNDS = Number(process.env.BENCH_PAIRED_ROUNDS ?? 4);
const PRESET = "mp4_264_720p";
/** The job's settings for (d) and (e): parts of about 30 s, as in production. */
const SPLIT = { minSeconds: 60, partSeconds: 30 };
const CORES = ["0", "1"];

const fmt = (n: number, digits = 2) => n.toFixed(digits);
/** The load averages printed through the run, kept for its results line. */
const loads: { at: string; load: string }[] = [];
const load = (at = "") => {
  const now = loadavg()
    .map((l) => l.toFixed(2))
    .join(" ");
  if (at) loads.push({ at, load: now });
  return now;
};

/** Runs `items` in order over `cores`, one at a time on each, as that many one-core encoders would. */
async function onTheCores<T>(
  cores: readonly string[],
  items: readonly T[],
  run: (item: T, cpu: string) => Promise<void>,
): Promise<void> {
  let next = 0;
  await Promise.all(
    cores.map(async (cpu) => {
      while (next < items.length) await run(items[next++], cpu);
    }),
  );
}

/** (a): the unsplit preset command on one core. */
async function bareUnsplit(source: string, probe: ProbeSummary): Promise<number> {
  const outDir = await mkdtemp(join(tmpdir(), "split-bare-"));
  try {
    let total = 0;
    for (const step of buildPresetCommands(PRESET, { input: source, outDir, probe }).steps)
      if (step.kind === "run") total += await timeFfmpeg(step.command.args, { cpu: CORES[0] });
    return total;
  } finally {
    await rm(outDir, { recursive: true, force: true });
  }
}

interface BareSplit {
  total: number;
  /** The packets read and the plan made (ffprobe, on any core). */
  plan: number;
  /** The pieces and the audio cut by stream copy, two at a time. */
  cuts: number;
  /** Each part's piece encoded, and the audio's task after them, two at a time, one per core. */
  parts: number;
  partSeconds: number[];
  /** The audio's task: the whole source's audio encoded once. */
  audio: number;
  /** The parts' video and the encoded audio copied into the output, nothing encoded. */
  join: number;
  count: number;
  /** The plan the split followed. */
  made: SplitPlan;
}

/**
 * The same encode split by hand with the encoder's own builders, as test/support/split-locally.ts
 * chains them, over `cores`: (b) on both, the ceiling for (e); (b1) on core 0 alone, for (d).
 */
async function bareSplit(source: string, probed: ProbedSource, cores: readonly string[]): Promise<BareSplit> {
  const { probe } = probed;
  const recipe = splittableRecipe(PRESET);
  const video = probe.video;
  if (!recipe || !video) throw new Error(`${PRESET} on this source does not split`);
  const dir = await mkdtemp(join(tmpdir(), "split-bare-"));
  try {
    const t0 = performance.now();
    const audio = probe.audio[0];
    const facts = await readSplitFacts(source, probed, {});
    const plan: SplitPlan | null = facts && planSplit(probe, facts, SPLIT);
    if (!plan) throw new Error("the source was not split");
    const t1 = performance.now();
    const pieces = plan.parts.map((part) => join(dir, `piece-${part.index}.mkv`));
    const audioPath = plan.audio && audio ? join(dir, "audio") : null;
    // By hand, every piece in one FFmpeg run, beside the audio's.
    const cuts = [
      piecesCommand(
        source,
        video.index,
        plan.parts.map((part, i) => ({ part, out: pieces[i] })),
      ).args,
      ...(audioPath && audio ? [audioPieceCommand(source, audio, audioPath).args] : []),
    ];
    await onTheCores(cores, cuts, async (args, cpu) => void (await timeFfmpeg(args, { cpu })));
    const t2 = performance.now();
    const outs = plan.parts.map((part) => join(dir, `part-${part.index}.nut`));
    const encodedAudio = audioPath ? join(dir, "audio.m4a") : null;
    const partSeconds: number[] = [];
    let audioSeconds = 0;
    // In the order the Worker publishes them: the audio's task, then the parts.
    await onTheCores(cores, [null, ...plan.parts], async (part, cpu) => {
      const started = performance.now();
      if (!part) {
        if (audioPath && encodedAudio)
          audioSeconds = await timeFfmpeg(audioTaskCommand(recipe, plan, { path: audioPath }, encodedAudio).args, {
            cpu,
          });
        return;
      }
      await timeFfmpeg(partCommand(recipe, plan, part, { piece: pieces[part.index] }, outs[part.index]).args, { cpu });
      partSeconds[part.index] = (performance.now() - started) / 1000;
    });
    const t3 = performance.now();
    const list = join(dir, "parts.ffconcat");
    await writeFile(list, concatList(plan, outs));
    const file = `output.${recipe.container}`;
    await timeFfmpeg(joinCommand(recipe, { list, audio: encodedAudio }, { dir, file }).args, { cpu: cores[0] });
    const t4 = performance.now();
    const s = (a: number, b: number) => (b - a) / 1000;
    return {
      total: s(t0, t4),
      plan: s(t0, t1),
      cuts: s(t1, t2),
      parts: s(t2, t3),
      partSeconds,
      audio: audioSeconds,
      join: s(t3, t4),
      count: plan.parts.length,
      made: plan,
    };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** The bare audio's task on core 0 over a pure tone of the source's length, as makeSource's tone source carries it. */
async function toneAudioTask(plan: SplitPlan): Promise<number> {
  const dir = await mkdtemp(join(tmpdir(), "split-tone-"));
  try {
    const input = join(dir, "tone.m4a");
    await ffmpeg([
      ...["-f", "lavfi", "-i", `sine=frequency=440:sample_rate=48000:duration=${SOURCE_SECONDS}`, "-ac", "2"],
      ...["-c:a", "aac", "-b:a", "96k", input],
    ]);
    const recipe = splittableRecipe(PRESET)!;
    return await timeFfmpeg(audioTaskCommand(recipe, plan, { path: input }, join(dir, "audio.m4a")).args, {
      cpu: CORES[0],
    });
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** An encoder's stage line, as it arrived (ms since the epoch). */
interface StageLine {
  at: number;
  jobId: string;
  /** The part, from 1 ("audio": the audio's task); none for the job's own stages and its join's. */
  part?: number | "audio";
  stage: string;
  encoder: string;
  detail: string;
}

const STAGE_LINE = /^job (\S+) {2}(?:part (\d+)\/\d+ {2}|(audio) {2})?(\S+)\s+on (\S+) {2}(.*)$/;
const stageLines: StageLine[] = [];

function keepStageLine(line: string) {
  const m = STAGE_LINE.exec(line);
  if (!m) return;
  stageLines.push({
    at: Date.now(),
    jobId: m[1],
    part: m[2] ? Number(m[2]) : m[3] ? "audio" : undefined,
    stage: m[4],
    encoder: m[5],
    detail: m[6],
  });
}

/** Seconds a line states (`… in 3.20 s`, `finished in 12.3 s`); a change to their wording fails here, not reads as 0 s. */
function secondsIn(line: StageLine | undefined, pattern = /in ([\d.]+) s/): number {
  const m = line && pattern.exec(line.detail);
  if (!m) throw new Error(`no seconds in the stage line ${JSON.stringify(line)}`);
  return Number(m[1]);
}

interface Case {
  name: string;
  e2e: E2E;
  client: Client;
}

interface JobRun {
  jobId: string;
  createdAt: number;
  total: number;
  /** CPU seconds its encoders and their FFmpeg runs took. */
  cpu: number;
  hookAt: number;
  downloadedAt: number;
}

const fixtures = await startFixtureServer();
const hooks = await startWebhookReceiver();
const cases: Case[] = [];
try {
  console.log(`Generating a ${SOURCE_SECONDS} s 1080p30 source with sound… (load average ${load("start")})`);
  const sourceUrl = await fixtures.source("split.mp4", {
    seconds: SOURCE_SECONDS,
    width: 1920,
    height: 1080,
    sound: "music",
  });
  const sourcePath = join(fixtures.dir, "split.mp4");
  const probed = await probeSource(sourcePath);
  const { probe } = probed;

  // The three stacks stay up side by side, so each round runs every case in turn; an idle stack costs next to nothing.
  const env = (split: boolean) => ({
    CONCURRENCY: "1",
    SPLIT_MIN_SECONDS: String(split ? SPLIT.minSeconds : SOURCE_SECONDS * 10),
    SPLIT_PART_SECONDS: String(SPLIT.partSeconds),
  });
  const setups = [
    { name: "(c) one encoder, one core, unsplit", encoders: 1, split: false },
    { name: "(d) one encoder, one core, split", encoders: 1, split: true },
    { name: "(e) two encoders, a core each, split", encoders: 2, split: true },
  ];
  const started = await Promise.allSettled(
    setups.map(async ({ name, encoders, split }) => {
      const e2e = await startE2E({
        allowLoopbackSources: true,
        encoders,
        cpus: CORES.slice(0, encoders),
        env: env(split),
        log: (source, line) => source === "encoder" && keepStageLine(line),
      });
      cases.push({ name, e2e, client: await e2e.client("enterprise") });
    }),
  );
  for (const s of started) if (s.status === "rejected") throw s.reason;
  cases.sort((x, y) => x.name.localeCompare(y.name));
  // Completion arrives by webhook, as a client should learn it: polling would take CPU from the encode.
  for (const c of cases) await c.e2e.admin.setWebhook(c.client.accountId, hooks.url);

  const clockTicks = Number((await promisify(execFile)("getconf", ["CLK_TCK"])).stdout);
  /** CPU seconds from /proc's stat of `pid`: its own (utime, stime) and its waited-for children's (cutime, cstime). */
  async function cpuOf(pid: number | "self", fields: readonly number[]): Promise<number> {
    const stat = await readFile(`/proc/${pid}/stat`, "utf8");
    // From the state on (the 3rd field), after the command's closing parenthesis: utime is the 14th field.
    const after = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return fields.reduce((sum, field) => sum + Number(after[field]), 0) / clockTicks;
  }
  const UTIME_TO_CSTIME = [11, 12, 13, 14];
  const CUTIME_CSTIME = [13, 14];
  /** CPU seconds the case's encoders, and the FFmpeg runs they have waited for, used so far. */
  async function encodersCpu(c: Case): Promise<number> {
    let seconds = 0;
    for (const encoder of c.e2e.stack.encoders) seconds += await cpuOf(encoder.pid(), UTIME_TO_CSTIME);
    return seconds;
  }
  /** Wall and CPU seconds of bare FFmpeg runs: the CPU of the ones this process waited for meanwhile (the stacks' processes run on). */
  async function timedBare<T>(run: () => Promise<T>): Promise<{ result: T; cpu: number }> {
    const before = await cpuOf("self", CUTIME_CSTIME);
    const result = await run();
    return { result, cpu: (await cpuOf("self", CUTIME_CSTIME)) - before };
  }

  async function runJob(c: Case): Promise<JobRun> {
    const cpuBefore = await encodersCpu(c);
    const createdAt = Date.now();
    const created = bodyOf(await c.client.createJob({ inputUrl: sourceUrl, preset: PRESET }), 201);
    const hook = await hooks.waitFor(created.id, 1_800_000);
    const event = JSON.parse(hook.body);
    if (event.status !== "completed") throw new Error(`${c.name}: ${event.errorMessage}`);
    await (await fetch(event.outputUrl)).arrayBuffer();
    const downloadedAt = Date.now();
    const cpu = (await encodersCpu(c)) - cpuBefore;
    return {
      jobId: created.id,
      createdAt,
      total: (downloadedAt - createdAt) / 1000,
      cpu,
      hookAt: hook.at,
      downloadedAt,
    };
  }

  let a = Infinity;
  let b: BareSplit | undefined;
  let b1: BareSplit | undefined;
  const best: (JobRun | undefined)[] = cases.map(() => undefined);
  /** Each round's own ratios: its cases ran minutes apart, under the same load. */
  const rounds: { ceiling: number; dCeiling: number; dCeilingCpu: number; d: number; e: number; dCpu: number }[] = [];
  for (let round = 1; round <= ROUNDS; round++) {
    // Every other round runs its steps in the reverse order: the host's speed drifts over minutes,
    // and a fixed order would hand that drift to one side of each ratio every time.
    const reversed = round % 2 === 0;
    console.log(
      `Round ${round} of ${ROUNDS}${reversed ? ", in reverse order" : ""} (load average ${load(`round ${round}`)})`,
    );
    let unsplit = 0;
    let split: BareSplit | undefined;
    let oneCore: BareSplit | undefined;
    let unsplitCpu = 0;
    let oneCoreCpu = 0;
    const totals: number[] = [];
    const cpus: number[] = [];
    const steps: (() => Promise<void>)[] = [
      async () => {
        ({ result: unsplit, cpu: unsplitCpu } = await timedBare(() => bareUnsplit(sourcePath, probe)));
        console.log(`  (a) bare, unsplit: ${fmt(unsplit)} s`);
      },
      async () => {
        split = await bareSplit(sourcePath, probed, CORES);
        console.log(`  (b) bare, split: ${fmt(split.total)} s`);
      },
      async () => {
        ({ result: oneCore, cpu: oneCoreCpu } = await timedBare(() => bareSplit(sourcePath, probed, [CORES[0]])));
        console.log(`  (b1) bare, split, one core: ${fmt(oneCore.total)} s`);
      },
      ...cases.map((c, i) => async () => {
        const run = await runJob(c);
        console.log(`  ${c.name}: ${fmt(run.total)} s (load average ${load()})`);
        totals[i] = run.total;
        cpus[i] = run.cpu;
        if (!best[i] || run.total < best[i].total) best[i] = run;
      }),
    ];
    for (const step of reversed ? steps.reverse() : steps) await step();
    a = Math.min(a, unsplit);
    if (!b || split!.total < b.total) b = split;
    if (!b1 || oneCore!.total < b1.total) b1 = oneCore;
    rounds.push({
      ceiling: split!.total / unsplit,
      dCeiling: oneCore!.total / unsplit,
      dCeilingCpu: oneCoreCpu / unsplitCpu,
      d: totals[1] / totals[0],
      dCpu: cpus[1] / cpus[0],
      e: totals[2] / totals[0],
    });
  }
  // (d) against (c) a second way: both at the same moment, one on each core, so whatever the
  // host does to its cores meanwhile it does to both; the cores swap every round, in case one
  // is slower than the other. The rest of the stack then has no core to itself.
  const paired: number[] = [];
  const pairedCpu: number[] = [];
  const taskset = promisify(execFile);
  const pin = (c: Case, cpu: string) =>
    taskset("taskset", ["-a", "-p", "-c", cpu, String(c.e2e.stack.encoders[0].pid())]);
  try {
    for (let round = 1; round <= PAIRED_ROUNDS; round++) {
      const [cCore, dCore] = round % 2 ? CORES : [...CORES].reverse();
      await pin(cases[0], cCore);
      await pin(cases[1], dCore);
      const [cRun, dRun] = await Promise.all([runJob(cases[0]), runJob(cases[1])]);
      paired.push(dRun.total / cRun.total);
      pairedCpu.push(dRun.cpu / cRun.cpu);
      console.log(
        `  side by side ${round} of ${PAIRED_ROUNDS}: (c) on core ${cCore} ${fmt(cRun.total)} s, (d) on core ${dCore} ${fmt(dRun.total)} s (load average ${load(`side by side ${round}`)})`,
      );
    }
  } finally {
    await pin(cases[0], CORES[0]);
    await pin(cases[1], CORES[0]);
  }
  const bare = b!;
  const [c, d, e] = best.map((r) => r!);
  const tone = await toneAudioTask(bare.made);

  const median = (xs: number[]) => {
    const sorted = [...xs].sort((x, y) => x - y);
    const mid = Math.floor(sorted.length / 2);
    return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
  };
  // The verdicts go on the medians of each round's own ratios: a best of each case taken apart
  // pairs one round's luck on one side with another's on the other.
  const ceilings = rounds.map((r) => r.ceiling);
  const ceiling = median(ceilings);
  const eTarget = ceiling > 0.5 ? ceiling + 0.05 : 0.55;
  const verdict = (ratio: number, target: number) => (ratio <= target ? "met" : "MISSED");
  const each = (xs: number[]) => xs.map((x) => fmt(x)).join(", ");
  console.log(
    `\nSplit benchmark: ${SOURCE_SECONDS} s 1080p30 source with music-like sound, ${PRESET}, ${bare.count} parts of about ${SPLIT.partSeconds} s, ${ROUNDS} rounds; load average at the end ${load("end")}\n`,
  );
  console.log(
    "| case | seconds (best of the rounds) | ratio of the bests | each round's own ratio | their median | target (on the median) |",
  );
  console.log("|---|---|---|---|---|---|");
  console.log(`| (a) bare FFmpeg, unsplit, one core | ${fmt(a)} | 1.00 | | | |`);
  console.log(
    `| (b) bare FFmpeg, split by hand on two cores (plan ${fmt(bare.plan)}, cuts ${fmt(bare.cuts)}, parts and audio ${fmt(bare.parts)}, of which the audio's task ${fmt(bare.audio)}, join ${fmt(bare.join)}) | ${fmt(bare.total)} | ${fmt(bare.total / a)} | ${each(ceilings)} | ${fmt(ceiling)}, the ceiling | |`,
  );
  const oneCore = b1!;
  const dCeilings = rounds.map((r) => r.dCeiling);
  console.log(
    `| (b1) bare FFmpeg, split by hand on one core (cuts ${fmt(oneCore.cuts)}, parts and audio ${fmt(oneCore.parts)}, join ${fmt(oneCore.join)}) | ${fmt(oneCore.total)} | ${fmt(oneCore.total / a)} | ${each(dCeilings)} | ${fmt(median(dCeilings))}, the floor for (d) | |`,
  );
  console.log(`| (c) our job, one encoder on one core, unsplit | ${fmt(c.total)} | 1.00 | | | |`);
  const dRounds = rounds.map((r) => r.d);
  const eRounds = rounds.map((r) => r.e);
  console.log(
    `| (d) our job, one encoder on one core, split | ${fmt(d.total)} | ${fmt(d.total / c.total)} | ${each(dRounds)} | ${fmt(median(dRounds))} | ≤ 1.05: ${verdict(median(dRounds), 1.05)} |`,
  );
  console.log(
    `| (e) our job, two encoders on a core each, split | ${fmt(e.total)} | ${fmt(e.total / c.total)} | ${each(eRounds)} | ${fmt(median(eRounds))} | ≤ ${fmt(eTarget)}: ${verdict(median(eRounds), eTarget)} |`,
  );
  if (paired.length > 0)
    console.log(
      `| (d)/(c) side by side: both at once, one on each core, the cores swapped every round | | | ${each(paired)} | ${fmt(median(paired))} | ≤ 1.05: ${verdict(median(paired), 1.05)} |`,
    );
  const dCpus = [...rounds.map((r) => r.dCpu), ...pairedCpu];
  const floorCpus = rounds.map((r) => r.dCeilingCpu);
  console.log(
    `| (b1)/(a) in CPU time: the floor for (d) by CPU | | | ${each(floorCpus)} | ${fmt(median(floorCpus))} | |`,
  );
  console.log(
    `| (d)/(c) in CPU time, the encoder's and its FFmpeg's (the rounds, then side by side): less moved by the host than wall time, but not the target | ${fmt(c.cpu)} and ${fmt(d.cpu)} s of CPU | ${fmt(d.cpu / c.cpu)} | ${each(dCpus)} | ${fmt(median(dCpus))} | |`,
  );
  console.log(
    `\n(d) over its floor, the stack's own cost of a split on one core: ${fmt(median(dRounds) - median(dCeilings))} in wall time (median ratios ${fmt(median(dRounds))} − ${fmt(median(dCeilings))}), ${fmt(median(dCpus) - median(floorCpus))} in CPU time (${fmt(median(dCpus))} − ${fmt(median(floorCpus))})`,
  );
  console.log(
    `(c)/(a), the job's overhead unsplit: ${fmt(c.total / a)}; bare parts one by one: ${bare.partSeconds.map((s) => fmt(s)).join(", ")} s`,
  );
  console.log(
    `The bare audio's task over a pure tone instead: ${fmt(tone)} s, ${fmt(tone / bare.audio, 1)}× the music's ${fmt(bare.audio)} s`,
  );

  const costs = breakdown(e, "(e)");
  breakdown(d, "(d)");
  const modelTable = model(costs, c.total / SOURCE_SECONDS, { d: d.total, e: e.total });
  recordRun(
    "split",
    { sourceSeconds: SOURCE_SECONDS, rounds: ROUNDS, pairedRounds: PAIRED_ROUNDS, preset: PRESET, ...SPLIT },
    {
      parts: bare.count,
      loadAverages: loads,
      best: { a, b: bare.total, b1: oneCore.total, c: c.total, d: d.total, e: e.total },
      b: { plan: bare.plan, cuts: bare.cuts, partsAndAudio: bare.parts, audio: bare.audio, join: bare.join },
      bareParts: bare.partSeconds,
      rounds,
      paired,
      pairedCpu,
      medians: {
        ceiling,
        floor: median(dCeilings),
        floorCpu: median(floorCpus),
        d: median(dRounds),
        e: median(eRounds),
        ...(paired.length > 0 ? { paired: median(paired) } : {}),
        dCpu: median(dCpus),
      },
      targets: { d: 1.05, e: eTarget },
      verdicts: {
        d: verdict(median(dRounds), 1.05),
        e: verdict(median(eRounds), eTarget),
        ...(paired.length > 0 ? { paired: verdict(median(paired), 1.05) } : {}),
      },
      cpuSeconds: { c: c.cpu, d: d.cpu },
      toneAudioTask: tone,
      modelCosts: costs,
      model: modelTable,
    },
  );
} finally {
  for (const c of cases) await c.e2e.stop();
  await hooks.stop();
  await fixtures.stop();
}

/** What the model is made of, measured on one split job. */
interface Costs {
  /** Creation to the claim of the job (QStash's delivery). */
  toClaim: number;
  /** The job's claim to its first task's claim (download, probe, packets, the audio's input stored, the plan handed over), per source second. */
  handOverPerSecond: number;
  /** The first task's claim to the last input stored, which the splitting encoder spends storing pieces, per source second. */
  storePerSecond: number;
  /** Source seconds a part's FFmpeg encodes per second of one core. */
  partSpeed: number;
  /** What a part costs besides its FFmpeg: its wait for dispatch, claim, download, upload, report. */
  partOverhead: number;
  /** The audio's task in its encoder (claim to report), per source second. */
  audioPerSecond: number;
  /** The last part's report to the join's claim. */
  toJoin: number;
  /** The join (download of the parts and the encoded audio, FFmpeg's copy, upload, report), per source second. */
  joinPerSecond: number;
  /** The join's end to the client's downloaded output, per source second. */
  tailPerSecond: number;
}

/** Where a split job's time went, from its stage lines, printed; the costs the model is built on. */
function breakdown(run: JobRun, label: string): Costs {
  const lines = stageLines.filter((l) => l.jobId === run.jobId);
  const whole = lines.filter((l) => l.part === undefined);
  const joinClaim = whole.find((l) => l.stage === "claim" && l.detail.includes("join of"));
  const split = whole.find((l) => l.stage === "split");
  if (!joinClaim || !split) throw new Error(`${label}: no split or join in the stage lines of job ${run.jobId}`);
  const before = whole.filter((l) => l.at <= split.at);
  const joinLines = whole.filter((l) => l.at >= joinClaim.at);
  const claim = before.find((l) => l.stage === "claim");
  const rel = (at: number) => fmt((at - run.createdAt) / 1000);
  const rows: string[][] = [];
  const row = (step: string, on: string, at: number, seconds: number, detail = "") =>
    rows.push([step, on, rel(at), fmt(seconds), detail]);
  row("creation to the claim", "", run.createdAt, (claim!.at - run.createdAt) / 1000);
  const count = Number(/into (\d+) parts/.exec(split.detail)?.[1]) + (/and the audio/.test(split.detail) ? 1 : 0);
  const parts = Array.from({ length: count }, (_, i) =>
    lines.filter((l) => l.part === (i === count - 1 && /and the audio/.test(split.detail) ? "audio" : i + 1)),
  );
  parts.sort((x, y) => x[0].at - y[0].at);
  const firstTask = parts[0].find((l) => l.stage === "claim")!;
  const handOver = (firstTask.at - claim!.at) / 1000;
  const storing = Math.max(0, (split.at - firstTask.at) / 1000);
  const splitDownload = secondsIn(before.find((l) => l.stage === "download"));
  row(
    "split stage to the first task's claim",
    split.encoder,
    claim!.at,
    handOver,
    `source read ${fmt(splitDownload)} (its head and index by ranges, or the download); probe, plan, the audio's input stored (pieces only), the hand-over ${fmt(handOver - splitDownload)}`,
  );
  row("the other pieces stored, beside the first tasks (none read by ranges)", split.encoder, firstTask.at, storing);
  // When each encoder was last free: a task's wait is from then (the splitting encoder: its last piece stored).
  const freeAt = new Map<string, number>([[split.encoder, split.at]]);
  let lastPartDone = split.at;
  const overheads: number[] = [];
  const speeds: number[] = [];
  let audioSeconds = 0;
  /** Where a task's input came from, by its download line (none: the kept part's, begun before its claim). */
  const inputOf = (download: StageLine | undefined) => {
    if (!download) return "its piece on the splitting encoder's disk, its encode begun before its claim";
    if (/already on this encoder's disk/.test(download.detail))
      return "its input on this encoder's disk, where it was cut";
    return `read ${fmt(secondsIn(download))} (beside FFmpeg: its span by ranges, or its piece)`;
  };
  for (const p of parts) {
    const at = (stage: string, pattern?: RegExp) =>
      p.find((l) => l.stage === stage && (!pattern || pattern.test(l.detail)));
    const pClaim = at("claim")!;
    const done = at("completed")!;
    const ffmpegEnd = at("ffmpeg", /finished in/)!;
    const wait = Math.max(0, (pClaim.at - (freeAt.get(pClaim.encoder) ?? pClaim.at)) / 1000);
    const inEncoder = secondsIn(done);
    const ffmpeg = secondsIn(ffmpegEnd);
    const name = p[0].part === "audio" ? "the audio's task" : `part ${p[0].part}`;
    if (p[0].part === "audio") audioSeconds = inEncoder;
    else {
      speeds.push(Number(/speed=([\d.]+)x/.exec(ffmpegEnd.detail)![1]));
      // The kept part's encode begins before its claim: its overhead is none.
      overheads.push(Math.max(0, wait + inEncoder - ffmpeg));
    }
    row(`${name}: dispatch wait`, pClaim.encoder, pClaim.at - wait * 1000, wait);
    row(
      name,
      pClaim.encoder,
      pClaim.at,
      inEncoder,
      `${inputOf(at("download"))}, FFmpeg ${fmt(ffmpeg)} (${/speed=[\d.]+x/.exec(ffmpegEnd.detail)![0]}), upload ${fmt(secondsIn(at("upload")))}`,
    );
    freeAt.set(pClaim.encoder, done.at);
    lastPartDone = Math.max(lastPartDone, done.at);
  }
  const toJoin = (joinClaim.at - lastPartDone) / 1000;
  row("last part's report to the join's claim", joinClaim.encoder, lastPartDone, toJoin);
  const joinDone = joinLines.find((l) => l.stage === "completed")!;
  const joinSeconds = secondsIn(joinDone);
  row(
    "join",
    joinClaim.encoder,
    joinClaim.at,
    joinSeconds,
    `download ${fmt(secondsIn(joinLines.find((l) => l.stage === "download")))}, FFmpeg ${fmt(secondsIn(joinLines.find((l) => l.stage === "ffmpeg" && /finished/.test(l.detail))))}, upload ${fmt(secondsIn(joinLines.find((l) => l.stage === "upload")))}`,
  );
  row("completion to the webhook", "", joinDone.at, (run.hookAt - joinDone.at) / 1000);
  row("the client's download", "", run.hookAt, (run.downloadedAt - run.hookAt) / 1000);
  console.log(`\nWhere ${label}'s time went (${fmt(run.total)} s; from the stage lines as they arrived)\n`);
  console.log("| step | on | from (s) | seconds | detail |");
  console.log("|---|---|---|---|---|");
  for (const r of rows) console.log(`| ${r.join(" | ")} |`);
  const mean = (xs: number[]) => xs.reduce((s, x) => s + x, 0) / xs.length;
  return {
    toClaim: (claim!.at - run.createdAt) / 1000,
    handOverPerSecond: handOver / SOURCE_SECONDS,
    storePerSecond: storing / SOURCE_SECONDS,
    partSpeed: mean(speeds),
    partOverhead: mean(overheads),
    audioPerSecond: audioSeconds / SOURCE_SECONDS,
    toJoin,
    joinPerSecond: joinSeconds / SOURCE_SECONDS,
    tailPerSecond: (run.downloadedAt - joinDone.at) / 1000 / SOURCE_SECONDS,
  };
}

/**
 * The time to output of a source of `seconds` on `encoders` one-core encoders. The hand-over and
 * the join are serial. The parts are cut as planSplit cuts them (about SPLIT_PART_SECONDS each, a
 * short tail of at least one 2 s keyframe interval its own part), each ready once its piece is
 * stored (the pieces land evenly over the storing). The splitting encoder keeps the first part,
 * which runs beside the storing (its measured speed includes sharing the core), so its lane frees
 * after the longer of the two. The audio's task is published at the hand-over, the parts as their
 * pieces land, and each goes to the first lane free; the Worker's PART_PARALLELISM is set to the
 * pool's size (docs/deploying.md#the-encoder-pool).
 */
function modelled(costs: Costs, seconds: number, encoders: number) {
  const whole = Math.floor(seconds / SPLIT.partSeconds);
  const tail = seconds - whole * SPLIT.partSeconds;
  const lengths = [...Array<number>(whole).fill(SPLIT.partSeconds), ...(tail >= 2 ? [tail] : [])];
  const storing = seconds * costs.storePerSecond;
  const partWork = (length: number) => length / costs.partSpeed + costs.partOverhead;
  type Ending = "the storing" | "the audio" | "parts";
  const [first, ...rest] = lengths.map((length, i) => ({
    ready: (storing * (i + 1)) / lengths.length,
    work: partWork(length),
    ends: "parts" as Ending,
  }));
  const kept = first.ready + first.work;
  const tasks = [{ ready: 0, work: seconds * costs.audioPerSecond, ends: "the audio" as Ending }, ...rest];
  const lanes: { free: number; ends: Ending }[] = [
    ...Array.from({ length: Math.min(encoders - 1, tasks.length) }, () => ({ free: 0, ends: "parts" as Ending })),
    { free: Math.max(storing, kept), ends: storing > kept ? "the storing" : "parts" },
  ];
  for (const task of tasks) {
    const lane = lanes.reduce((a, b) => (b.free < a.free ? b : a));
    // A part that waited for its piece ends as the storing let it.
    const ends = task.ready > lane.free && task.ends === "parts" ? "the storing" : task.ends;
    lane.free = Math.max(lane.free, task.ready) + task.work;
    lane.ends = ends;
  }
  const serial =
    costs.toClaim + seconds * (costs.handOverPerSecond + costs.joinPerSecond + costs.tailPerSecond) + costs.toJoin;
  const last = lanes.reduce((a, b) => (b.free > a.free ? b : a));
  return {
    total: serial + last.free,
    serial,
    lanes: lanes.length,
    waves: Math.ceil(lengths.length / lanes.length),
    /** What ends last: the parts, the storing they waited for, or the audio's task. */
    bound: last.ends,
  };
}

function model(costs: Costs, unsplitPerSecond: number, measured: { d: number; e: number }) {
  console.log(
    `\nThe model's costs, from (e): creation to claim ${fmt(costs.toClaim)} s; the claim to the first task's ${fmt(costs.handOverPerSecond, 3)} s per source second; the other pieces stored ${fmt(costs.storePerSecond, 3)} s per source second; a part's FFmpeg ${fmt(costs.partSpeed)}× realtime per core; a part's other costs (dispatch wait, claim, download, upload, report) ${fmt(costs.partOverhead)} s; the audio's task ${fmt(costs.audioPerSecond, 3)} s per source second; last part to the join's claim ${fmt(costs.toJoin)} s; join ${fmt(costs.joinPerSecond, 3)} s per source second; the join's end to the downloaded output ${fmt(costs.tailPerSecond, 3)} s per source second. Unsplit on one core (c): ${fmt(unsplitPerSecond, 3)} s per source second.`,
  );
  console.log(
    `Checked against this run: ${SOURCE_SECONDS} s on 1 encoder ${fmt(modelled(costs, SOURCE_SECONDS, 1).total)} s (measured (d) ${fmt(measured.d)} s), on 2 ${fmt(modelled(costs, SOURCE_SECONDS, 2).total)} s (measured (e) ${fmt(measured.e)} s)\n`,
  );
  const lengths = [600, 3600];
  console.log(
    `| encoders | ${lengths.map((l) => `${l / 60} min: time to output (s) | speed-up on unsplit | lanes × waves | serial share | ends with`).join(" | ")} |`,
  );
  console.log(`|---|${lengths.map(() => "---|---|---|---|---|").join("")}`);
  const table: { encoders: number; minutes: number; seconds: number; bound: string }[] = [];
  for (const n of [1, 2, 4, 8, 16, 32, 50]) {
    const cells = lengths.map((l) => {
      const m = modelled(costs, l, n);
      table.push({ encoders: n, minutes: l / 60, seconds: Math.round(m.total), bound: m.bound });
      return `${fmt(m.total, 0)} | ${fmt((l * unsplitPerSecond) / m.total, 1)}× | ${m.lanes} × ${m.waves} | ${fmt((100 * m.serial) / m.total, 0)}% | ${m.bound}`;
    });
    console.log(`| ${n} | ${cells.join(" | ")} |`);
  }
  return table;
}
