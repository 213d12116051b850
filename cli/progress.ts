import { SingleBar } from "cli-progress";
import type { Job, UploadProgress } from "../client";

/**
 * A progress bar on stderr while a job runs. cli-progress draws only on a terminal, so piped
 * and scripted runs stay clean.
 */
export function jobProgressBar(jobId: string) {
  const bar = new SingleBar({
    format: `${jobId.slice(0, 8)} [{bar}] {percentage}% | {status}`,
    stream: process.stderr,
    hideCursor: true,
    clearOnComplete: false,
  });
  let started = false;
  return {
    update(job: Job) {
      const value = Math.round((job.status === "completed" ? 1 : (job.progress ?? 0)) * 100);
      if (!started) bar.start(100, value, { status: job.status });
      else bar.update(value, { status: job.status });
      started = true;
    },
    stop() {
      if (started) bar.stop();
    },
  };
}

const MiB = 1024 * 1024;

/** A progress bar on stderr while a file uploads, in MiB; drawn only on a terminal, as the job's. */
export function uploadProgressBar(filename: string) {
  const bar = new SingleBar({
    format: `${filename} [{bar}] {percentage}% | {sent}/{total} MiB`,
    stream: process.stderr,
    hideCursor: true,
    clearOnComplete: false,
  });
  let started = false;
  const mib = (bytes: number) => (bytes / MiB).toFixed(1);
  return {
    update({ sentBytes, totalBytes }: UploadProgress) {
      const fields = { sent: mib(sentBytes), total: mib(totalBytes) };
      if (!started) bar.start(totalBytes, sentBytes, fields);
      else bar.update(sentBytes, fields);
      started = true;
    },
    stop() {
      if (started) bar.stop();
    },
  };
}
