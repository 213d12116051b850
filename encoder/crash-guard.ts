import { currentJobScope } from "./jobs/job-scope";
import { formatStage } from "./jobs/stage-log";

/** A thrown value as a log shows it: the stack when there is one. */
export function describeError(err: unknown): string {
  if (err instanceof Error) return err.stack ?? `${err.name}: ${err.message}`;
  return String(err);
}

type Kind = "uncaught exception" | "unhandled rejection";

/**
 * Errors no code caught. One that belongs to a job (thrown from anything the job started, in
 * its scope) ends that job as failed, retried per the contract, and the encoder serves on: the
 * state it may have broken is the job's, and the job's work is thrown away. One outside every
 * job means the process's own state is unknown: it is logged loudly and the process exits, so
 * the supervisor (Fly.io, or `npm run dev`) starts a clean one and QStash redelivers its jobs.
 */
export function installCrashGuard(opts: { beforeExit: () => void; encoderName: () => string }): void {
  const handle = (err: unknown, kind: Kind) => {
    const job = currentJobScope();
    if (job) {
      const what = job.fail(err) ? "ended the job" : "came after the job had ended";
      console.error(
        `${formatStage(job.jobId, { stage: "error", message: `an ${kind} ${what}; the encoder carries on` }, { encoder: opts.encoderName() })}\n${describeError(err)}`,
      );
      return;
    }
    console.error(
      `ENCODER FAILURE: an ${kind} outside any job; the process state is unknown, so it exits for a clean restart.\n${describeError(err)}`,
    );
    opts.beforeExit();
    process.exit(1);
  };
  process.on("uncaughtException", (err) => handle(err, "uncaught exception"));
  process.on("unhandledRejection", (reason) => handle(reason, "unhandled rejection"));
  // Output that can no longer be written (EPIPE: whoever read it, the supervisor, is gone) must
  // not reach the handler above: it would log that failure, fail again, and spin forever. Nobody
  // hears this process any more, and nobody would restart it: it exits.
  for (const stream of [process.stdout, process.stderr]) {
    stream.on("error", () => {
      opts.beforeExit();
      process.exit(1);
    });
  }
}
