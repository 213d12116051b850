import { JobGoneError } from "../internal-api";

/**
 * Reports liveness, progress and (once known) the duration every `intervalMs`. When the Worker
 * answers that the job is no longer this claim's (cancelled, or claimed again after this encoder
 * went quiet), `onGone` fires once so the caller can kill FFmpeg. One beat at a time: a beat due while the last is still unanswered (a slow Worker)
 * is skipped, so that `stop()` waiting for that one means no beat of this attempt can land after
 * its report.
 */
export function startHeartbeat(
  send: (beat: { progress?: number; duration?: number }) => Promise<unknown>,
  intervalMs: number,
  onGone: (status: string) => void,
) {
  let progress: number | undefined;
  let duration: number | undefined;
  let stopped = false;
  let beating = false;
  let inFlight: Promise<void> = Promise.resolve();
  const beat = () => {
    beating = true;
    inFlight = send({ progress, duration })
      .then(() => undefined)
      .catch((err) => {
        if (err instanceof JobGoneError) {
          stopped = true;
          clearInterval(timer);
          onGone(err.status);
        }
        // Other failures are transient; the next beat tries again and the sweep covers long outages.
      })
      .finally(() => (beating = false));
  };
  const timer = setInterval(() => !stopped && !beating && beat(), intervalMs);
  return {
    setProgress(value: number) {
      progress = Math.max(0, Math.min(1, value));
    },
    setDuration(seconds: number) {
      duration = seconds;
    },
    async stop() {
      stopped = true;
      clearInterval(timer);
      await inFlight;
    },
  };
}
