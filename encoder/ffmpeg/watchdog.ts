import type { ChildProcess } from "node:child_process";
import { readFile } from "node:fs/promises";
import { JobFailure } from "../failure";

/**
 * When a run of FFmpeg or ffprobe is given up. `stallMs`: no progress for that long, that is,
 * FFmpeg's output time did not advance and the process read nothing (it waits on input that
 * never comes, or loops without reading). Reading counts: a sprite sheet or a thumbnail's
 * `select` writes its frames only at the end of a long decode, and ffprobe writes nothing until
 * it is done. `timeLimitFactor`: a run on N seconds of media is stopped after N × the factor
 * seconds, plus `stallMs`, however it progresses (a loop that reads its input over and over).
 */
export interface Watchdog {
  stallMs: number;
  timeLimitFactor: number;
}

/**
 * The encoder's defaults (FFMPEG_STALL_MS, FFMPEG_TIME_LIMIT_FACTOR). The slowest encodes,
 * a 4K HEVC ladder of five rungs with another encode beside it on two cores, run many times
 * slower than real time; a hundred times leaves room for a slower machine.
 */
export const DEFAULT_WATCHDOG: Watchdog = { stallMs: 180_000, timeLimitFactor: 100 };

/** Bytes the process has read, from files, pipes or sockets (`rchar`); null where /proc does not say. */
export async function bytesRead(pid: number): Promise<number | null> {
  try {
    const match = /^rchar:\s*(\d+)$/m.exec(await readFile(`/proc/${pid}/io`, "utf8"));
    return match ? Number(match[1]) : null;
  } catch {
    return null;
  }
}

const duration = (ms: number) =>
  ms >= 120_000 && ms % 60_000 === 0 ? `${ms / 60_000} minutes` : `${Number((ms / 1000).toFixed(1))} s`;

/**
 * What a run's time limit is reckoned from: `mediaSeconds` of media (the factor times it, plus
 * the stall window; none without it), or a probe, which reads headers and a few seconds of
 * streams and gets the stall window in all (a demuxer that seeks and reads over and over never
 * stalls).
 */
export interface RunSpan {
  mediaSeconds?: number;
  probe?: boolean;
}

/**
 * Watches a running tool; `end` is called (once is enough: the caller kills the tool) when it
 * stalls or outlives its time limit. `progressed` is the caller's news of progress (FFmpeg's
 * output time advancing); the process reading more is checked here, at a tenth of the stall
 * window and at least once a second.
 */
export function watchProgress(
  child: ChildProcess,
  tool: string,
  watchdog: Watchdog,
  span: RunSpan,
  end: (failure: JobFailure) => void,
) {
  const started = performance.now();
  let lastProgress = started;
  let read: number | null = null;
  let checking = false;
  const { mediaSeconds } = span;
  const limitMs = span.probe
    ? watchdog.stallMs
    : mediaSeconds && mediaSeconds > 0
      ? watchdog.stallMs + watchdog.timeLimitFactor * mediaSeconds * 1000
      : Infinity;
  const check = async () => {
    if (checking || child.pid === undefined) return;
    checking = true;
    const now = await bytesRead(child.pid);
    checking = false;
    if (now !== null && read !== null && now > read) lastProgress = performance.now();
    if (now !== null) read = now;
    const at = performance.now();
    if (at - lastProgress > watchdog.stallMs) {
      end(
        JobFailure.ffmpeg(
          `FFmpeg could not process the source: ${tool} made no progress for ${duration(watchdog.stallMs)} (it encoded nothing and read nothing) and was stopped.`,
        ),
      );
    } else if (at - started > limitMs && span.probe) {
      end(
        JobFailure.ffmpeg(
          `FFmpeg could not process the source: ${tool} ran for ${duration(at - started)}, longer than a probe of its headers may, and was stopped.`,
        ),
      );
    } else if (at - started > limitMs && mediaSeconds) {
      end(
        JobFailure.ffmpeg(
          `FFmpeg could not process the source: ${tool} ran for ${duration(at - started)} on ${Number(mediaSeconds.toFixed(1))} s of media, ` +
            `more than ${watchdog.timeLimitFactor} times its duration, and was stopped.`,
        ),
      );
    }
  };
  const timer = setInterval(() => void check(), Math.min(1000, Math.max(50, watchdog.stallMs / 10)));
  return {
    progressed: () => {
      lastProgress = performance.now();
    },
    stop: () => clearInterval(timer),
  };
}
