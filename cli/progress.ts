import { SingleBar } from "cli-progress";
import type { Job } from "../client";

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
