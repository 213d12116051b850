import type { StageLog } from "./stage-log";

/** What a job produced in its work dir: one file to upload as is, or many to upload as one ZIP. */
export type JobOutput =
  | { kind: "file"; path: string; fileName: string; contentType: string }
  | { kind: "zip"; dir: string; files: string[]; fileName: string };

export interface RenderContext {
  workDir: string;
  signal: AbortSignal;
  onProgress(fraction: number): void;
  /** One line per stage (download, probe, FFmpeg runs) in the job's log. */
  log: StageLog;
}
