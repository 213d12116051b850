import type { TaskInput } from "../../domain/split";
import type { ProbeSummary } from "../ffmpeg/probe";
import type { FfmpegStage } from "../ffmpeg/run";
import type { InternalCall } from "../internal-api";

/**
 * One line per stage of a job, for a person reading the encoder's log in a terminal (and
 * `npm run dev`, which shows these lines). Each starts with `job <id>`, so one job's story can be
 * grepped out of a busy log, and names the encoder it ran on: a split job's parts run on several
 * (docs/scaling.md).
 */
export type JobStage =
  | { stage: "claim"; attempt: number; attempts: number; preset: string }
  | { stage: "download"; bytes: number; seconds: number; asset?: string; onDisk?: true }
  | { stage: "probe"; probe: ProbeSummary; asset?: string }
  | FfmpegStage
  | { stage: "upload"; bytes: number; seconds: number }
  /** The Worker took the stream's first segments of every rendition: its playbackUrl plays from now on. */
  | { stage: "playable" }
  | { stage: "completed"; seconds: number }
  /** The job was cut into parts, now the Worker's to hand out (docs/scaling.md). */
  | { stage: "split"; parts: number; audio: boolean; reads: TaskInput; seconds: number }
  | { stage: "cancelled"; status: string }
  | { stage: "failed"; reason: string; cause?: string; final: boolean; attempt: number; attempts: number }
  | { stage: "error"; message: string }
  /** A claim or report the Worker did not take, asked again after a wait. */
  | { stage: "worker-retry"; call: InternalCall; reason: string; waitSeconds: number };

export type StageLog = (stage: JobStage) => void;

const TASK_INPUTS: Record<TaskInput, string> = {
  ranges: "each to read its span of the source by ranges",
  pieces: "each to read its piece from storage",
};

const STAGE_WIDTH = "completed".length;

export function formatBytes(bytes: number): string {
  const units = ["B", "KiB", "MiB", "GiB", "TiB"];
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit += 1;
  }
  return unit === 0 ? `${bytes} B` : `${value.toFixed(1)} ${units[unit]}`;
}

const seconds = (s: number) => `${s.toFixed(s < 10 ? 2 : 1)} s`;

/** FFmpeg's own notion of speed: seconds of media processed per second of wall time. */
export function ffmpegSpeed(mediaSeconds: number, wallSeconds: number): string {
  return wallSeconds > 0 && mediaSeconds > 0 ? `speed=${(mediaSeconds / wallSeconds).toFixed(2)}x` : "speed=n/a";
}

/** What the probe found: duration and one entry per stream kind. */
export function describeProbe(probe: ProbeSummary): string {
  const parts = [seconds(probe.duration)];
  const v = probe.video;
  if (v) parts.push(`video ${v.codec} ${v.width}x${v.height}${v.fps ? ` ${Number(v.fps.toFixed(2))} fps` : ""}`);
  for (const a of probe.audio) parts.push(`audio ${a.codec} ${a.channels} ch ${a.sampleRate / 1000} kHz`);
  if (probe.subtitles.length > 0)
    parts.push(`${probe.subtitles.length} subtitle track${probe.subtitles.length === 1 ? "" : "s"}`);
  return parts.join("; ");
}

const forAsset = (asset: string | undefined) => (asset ? `${asset}: ` : "");

function detail(s: JobStage): string {
  switch (s.stage) {
    case "claim":
      return `attempt ${s.attempt + 1} of ${s.attempts}, preset ${s.preset}`;
    case "download":
      return s.onDisk
        ? `${formatBytes(s.bytes)} already on this encoder's disk: it cut this input`
        : `${forAsset(s.asset)}${formatBytes(s.bytes)} in ${seconds(s.seconds)}`;
    case "probe":
      return `${forAsset(s.asset)}${describeProbe(s.probe)}`;
    case "ffmpeg-start":
      return `started on ${seconds(s.mediaSeconds)} of media`;
    case "ffmpeg-end":
      return `finished in ${seconds(s.wallSeconds)}, ${ffmpegSpeed(s.mediaSeconds, s.wallSeconds)}`;
    case "upload":
      return `${formatBytes(s.bytes)} in ${seconds(s.seconds)}`;
    case "playable":
      return "the first segments are stored: the job's playbackUrl plays while it encodes";
    case "completed":
      return `in ${seconds(s.seconds)}`;
    case "split":
      return `into ${s.parts} parts${s.audio ? " and the audio" : ""} in ${seconds(s.seconds)}, ${TASK_INPUTS[s.reads]}; they go to the encoder pool`;
    case "cancelled":
      return s.status === "processing"
        ? "the job was claimed again after this encoder went quiet; work stopped"
        : `the job is ${s.status}; work stopped`;
    case "failed": {
      const next = s.final ? "not retried" : "will be retried";
      return `attempt ${s.attempt + 1} of ${s.attempts}, ${next}: ${s.reason}${s.cause ? ` [cause: ${s.cause}]` : ""}`;
    }
    case "error":
      return s.message;
    case "worker-retry":
      return `${s.call} not taken (${s.reason}); asking again in ${seconds(s.waitSeconds)}`;
  }
}

const STAGE_NAMES: Record<JobStage["stage"], string> = {
  claim: "claim",
  download: "download",
  probe: "probe",
  "ffmpeg-start": "ffmpeg",
  "ffmpeg-end": "ffmpeg",
  upload: "upload",
  playable: "playable",
  completed: "completed",
  split: "split",
  cancelled: "cancelled",
  failed: "failed",
  error: "error",
  "worker-retry": "worker",
};

/**
 * Where a stage ran: the encoder (its ENCODER_NAME), and the part of a split job if it is one
 * (`index` from 0, shown from 1; `index` = `count` is the audio's task, shown as `audio`).
 */
export interface StageWhere {
  encoder: string;
  part?: { index: number; count: number };
}

function partLabel(part: StageWhere["part"]): string {
  if (!part) return "";
  return part.index < part.count ? `part ${part.index + 1}/${part.count}  ` : "audio  ";
}

export function formatStage(jobId: string, stage: JobStage, where: StageWhere): string {
  const part = partLabel(where.part);
  return `job ${jobId}  ${part}${STAGE_NAMES[stage.stage].padEnd(STAGE_WIDTH)}  on ${where.encoder}  ${detail(stage)}`;
}

const JOB_ID = "[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}";
const STAGE_LINE = new RegExp(`^job ${JOB_ID} {2}`);
const PLAYABLE_LINE = new RegExp(`^job (${JOB_ID}) {2}(?:part \\d+/\\d+ {2}|audio {2})?playable `);

/** Whether a log line is one of the lines above (the dev runner shows these without VERBOSE). */
export const isJobStageLine = (line: string): boolean => STAGE_LINE.test(line);

/** The job a `playable` line is about, if the line is one: the dev runner prints the job's link on it. */
export function playableJobOf(line: string): string | undefined {
  return PLAYABLE_LINE.exec(line)?.[1];
}
