import { JobGoneError, type InternalApi } from "../internal-api";

/**
 * Reports liveness and progress every `intervalMs`. When the Worker answers that the job is no
 * longer processing (cancelled), `onGone` fires once so the caller can kill FFmpeg.
 */
export function startHeartbeat(api: InternalApi, jobId: string, intervalMs: number, onGone: (status: string) => void) {
  let progress: number | undefined;
  let stopped = false;
  let inFlight: Promise<void> = Promise.resolve();
  const beat = () => {
    inFlight = api
      .heartbeat(jobId, progress)
      .then(() => undefined)
      .catch((err) => {
        if (err instanceof JobGoneError) {
          stopped = true;
          clearInterval(timer);
          onGone(err.status);
        }
        // Other failures are transient; the next beat tries again and the sweep covers long outages.
      });
  };
  const timer = setInterval(() => !stopped && beat(), intervalMs);
  return {
    setProgress(value: number) {
      progress = Math.max(0, Math.min(1, value));
    },
    async stop() {
      stopped = true;
      clearInterval(timer);
      await inFlight;
    },
  };
}
