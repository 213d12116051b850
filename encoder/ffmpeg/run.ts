import { spawn, type ChildProcess } from "node:child_process";
import type { Readable } from "node:stream";
import { JobFailure } from "../failure";
import { pictureTooLarge, refusedPictureSize, withinPictureLimits } from "./picture-limits";
import { encoderSession } from "./priority";
import { DEFAULT_WATCHDOG, watchProgress, type RunSpan, type Watchdog } from "./watchdog";

const STDERR_LINES_KEPT = 50;
/** Lines of the kept stderr that go into the job's error message. */
const MESSAGE_LINES = 3;
const WORK_DIR_PLACEHOLDER = "<work>";

/** What a run of FFmpeg tells the job's stage log. */
export type FfmpegStage =
  | { stage: "ffmpeg-start"; mediaSeconds: number }
  | { stage: "ffmpeg-end"; mediaSeconds: number; wallSeconds: number };

export interface RunOptions {
  signal?: AbortSignal;
  /** Replaced by a placeholder in error text, so no server path reaches a customer. */
  workDir?: string;
  /** When the run is given up; DEFAULT_WATCHDOG unless told. */
  watchdog?: Watchdog;
  /** What the tool reads on its standard input (STDIN_INPUT): otherwise it gets none. */
  stdin?: Readable;
  /**
   * The run's niceness (0 to 19): a stream's later parts run below its first, which the stream's
   * start waits on, where several share a machine's cores.
   */
  niceness?: number;
  /** Told the tool's pid once it runs (the same pid whether or not prlimit and nice start it). */
  onSpawn?(pid: number): void;
}

export interface FfmpegRunOptions extends RunOptions {
  /** Source duration in seconds, to turn `out_time_us` into a fraction (and for the watchdog's time limit). */
  durationSeconds?: number;
  onProgress?(fraction: number): void;
  /** Told when FFmpeg starts and when it finishes, with its speed over `durationSeconds`. */
  log?: (stage: FfmpegStage) => void;
}

/** Output time in microseconds from one `-progress` line, or null for other keys and N/A. */
export function outTimeFromProgressLine(line: string): number | null {
  const match = /^out_time_us=(\d+)$/.exec(line.trim());
  return match ? Number(match[1]) : null;
}

export function sanitizeFfmpegLog(text: string, workDir?: string): string {
  const withoutPaths = workDir ? text.split(workDir).join(WORK_DIR_PLACEHOLDER) : text;
  // `[libx264 @ 0x55d1…]` → `[libx264]`: addresses are noise to a reader.
  return withoutPaths.replace(/ @ 0x[0-9a-f]+\]/g, "]");
}

/** The last `max` lines of a stream, without holding more than that; `onLine` sees each as it completes. */
function lineTail(max: number, onLine: (line: string) => void = () => undefined) {
  const lines: string[] = [];
  let partial = "";
  return {
    push(chunk: string) {
      const parts = (partial + chunk).split(/\r?\n|\r/);
      partial = parts.pop() ?? "";
      for (const line of parts) {
        if (line.trim() === "") continue;
        onLine(line);
        lines.push(line);
        if (lines.length > max) lines.shift();
      }
    },
    lines: () => (partial.trim() ? [...lines, partial].slice(-max) : lines),
  };
}

/** Bytes of data each run may hold (encoder/memory.ts), set once as the encoder starts; no limit until then. */
let memoryLimit: number | undefined;

/** Every later FFmpeg and ffprobe run is held to `bytes` of data (RLIMIT_DATA, through util-linux's prlimit); undefined lifts it. */
export function limitToolMemory(bytes: number | undefined): void {
  memoryLimit = bytes;
}

/**
 * What FFmpeg's libraries print when an allocation fails: ENOMEM, x264's own words, and EAGAIN,
 * which is how a thread whose stack cannot be mapped fails to start.
 */
const OUT_OF_MEMORY =
  /Cannot allocate memory|malloc of size \d+ failed|out of memory|Resource temporarily unavailable/i;
/** prlimit's and nice's exit code when the command they were to run is missing, as a shell's. */
const NOT_FOUND_EXIT = 127;

/**
 * Pure: the command that runs `tool`: under nice for a niceness above 0, under prlimit for a
 * memory limit. Each execs what follows in its own place, so the pid is the tool's.
 */
export function toolCommand(
  tool: string,
  args: string[],
  limits: { memoryBytes?: number; niceness?: number },
): [string, string[]] {
  let line = [tool, ...args];
  if (limits.niceness) line = ["nice", "-n", String(limits.niceness), ...line];
  if (limits.memoryBytes !== undefined) line = ["prlimit", `--data=${limits.memoryBytes}`, "--", ...line];
  return [line[0], line.slice(1)];
}

/** FFmpeg and ffprobe processes running now, so a shutting-down encoder can take them with it. */
const running = new Set<ChildProcess>();

/** Kills every FFmpeg and ffprobe this process started that is still running. */
export function killRunningTools(): void {
  for (const child of running) child.kill("SIGKILL");
}

interface Spawned {
  stdout: string;
  stderrLines: string[];
}

/** What a run is watched for beyond its exit; a failure found ends it (the tool is killed). */
interface Supervision {
  watchdog: Watchdog;
  /** What the watchdog's time limit is reckoned from. */
  span: RunSpan;
  /** Each chunk of stdout, instead of keeping it (FFmpeg's `-progress` report); `progressed` restarts the stall clock. */
  onStdout?(chunk: string, progressed: () => void): void;
  /** Each line of stderr as it comes. */
  onStderrLine?(line: string): JobFailure | undefined;
  /** The most stdout kept: a report past it ends the run, as no media file's report is that large. */
  maxStdoutBytes?: number;
}

/**
 * Feeds `input` to the tool's standard input. An input that fails ends the run: the tool would
 * take the bytes it got for the whole input, and a part would come out short of frames.
 */
function feed(input: Readable, child: ChildProcess, end: (failure: JobFailure) => void) {
  const sink = child.stdin;
  if (!sink) return;
  // The tool may stop reading once it has what it needs (-frames): the rest is not wanted.
  sink.on("error", () => input.destroy());
  input.on("error", (err) =>
    end(err instanceof JobFailure ? err : JobFailure.download(`the input stopped arriving: ${err.message}`)),
  );
  input.pipe(sink);
}

function spawnTool(tool: string, args: string[], options: RunOptions, supervision: Supervision): Promise<Spawned> {
  return new Promise((resolve, reject) => {
    const { signal, stdin } = options;
    if (signal?.aborted) {
      stdin?.destroy();
      return reject(signal.reason);
    }
    const limit = memoryLimit;
    const [command, commandArgs] = toolCommand(tool, args, { memoryBytes: limit, niceness: options.niceness });
    const child = spawn(command, commandArgs, {
      stdio: [stdin ? "pipe" : "ignore", "pipe", "pipe"],
      // SVT-AV1 prints its configuration banner at info level straight to stderr; warnings only.
      env: { ...process.env, SVT_LOG: "2" },
    });
    // A tool missing from this machine is missing on the next attempt too: not the job's fault, not retried.
    const notStarted = (err: NodeJS.ErrnoException) =>
      err.code === "ENOENT"
        ? JobFailure.encoderSetup(`${command} is not installed on the encoder`)
        : JobFailure.ffmpeg(`${tool} could not be started: ${err.message}`, err);
    if (!child.stdout || !child.stderr) {
      stdin?.destroy();
      // Out of file descriptors (EMFILE) Node makes no pipes and reports why with an "error" event.
      child.once("error", (err) => reject(notStarted(err)));
      return;
    }
    running.add(child);
    const { pid } = child;
    if (pid !== undefined) {
      void encoderSession.add(pid, options.niceness ?? 0);
      options.onSpawn?.(pid);
    }
    let ended: JobFailure | undefined;
    const end = (failure: JobFailure) => {
      if (ended) return;
      ended = failure;
      child.kill("SIGKILL");
    };
    const watch = watchProgress(child, tool, supervision.watchdog, supervision.span, end);
    let outOfMemory = false;
    const stderr = lineTail(STDERR_LINES_KEPT, (line) => {
      if (limit !== undefined && OUT_OF_MEMORY.test(line)) outOfMemory = true;
      const failure = supervision.onStderrLine?.(line);
      if (failure) end(failure);
    });
    let stdout = "";
    const { onStdout } = supervision;
    const { maxStdoutBytes = Number.POSITIVE_INFINITY } = supervision;
    let stdoutBytes = 0;
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
      if (onStdout) return onStdout(chunk, watch.progressed);
      stdoutBytes += Buffer.byteLength(chunk);
      if (stdoutBytes > maxStdoutBytes) {
        stdout = "";
        end(JobFailure.sourceRefused(`${tool}'s report on the file is over ${maxStdoutBytes / 1024 ** 2} MiB`));
      } else if (!ended) stdout += chunk;
    });
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => stderr.push(chunk));
    if (stdin) feed(stdin, child, end);
    const onAbort = () => child.kill("SIGKILL");
    signal?.addEventListener("abort", onAbort, { once: true });
    const settle = () => {
      running.delete(child);
      if (pid !== undefined) void encoderSession.end(pid);
      watch.stop();
      stdin?.destroy();
      signal?.removeEventListener("abort", onAbort);
    };
    child.on("error", (err) => {
      settle();
      reject(notStarted(err));
    });
    child.on("close", (code, killedBy) => {
      settle();
      if (signal?.aborted) return reject(signal.reason);
      if (ended) return reject(ended);
      const stderrLines = stderr.lines().map((l) => sanitizeFfmpegLog(l, options.workDir));
      if (code === 0) return resolve({ stdout, stderrLines });
      if (command !== tool && code === NOT_FOUND_EXIT && stderrLines.some((l) => /^(prlimit|nice):/.test(l)))
        return reject(JobFailure.encoderSetup(`${tool} is not installed on the encoder`));
      if (limit !== undefined && outOfMemory) return reject(JobFailure.memoryExceeded(limit, stderrLines.join(" | ")));
      const why = code === null ? `was killed by ${killedBy}` : `exited with code ${code}`;
      const detail = stderrLines.slice(-MESSAGE_LINES).join(" | ");
      const message = `FFmpeg could not process the source: ${tool} ${why}${detail ? `: ${detail}` : ""}`;
      // The message keeps the last lines; the job's one failure log line gets all that were kept.
      reject(JobFailure.ffmpeg(message, stderrLines.join(" | ")));
    });
  });
}

/** A picture over the size limit, refused by a decoder while FFmpeg encodes (the probe saw only the first frame). */
function pictureRefusal(line: string): JobFailure | undefined {
  const refused = refusedPictureSize(line);
  // FFmpeg calls a 0x0 or corrupt frame size "invalid" too: only a size over the limits is this refusal.
  return refused && !withinPictureLimits(refused.width, refused.height)
    ? pictureTooLarge("a frame of the source", refused.width, refused.height)
    : undefined;
}

/**
 * Runs FFmpeg: the one place the encoder spawns it. Progress comes from `-progress pipe:1`
 * (the builders add it); on abort FFmpeg is killed with SIGKILL and the promise rejects with
 * the signal's reason once the process is gone. A decoder refusing an oversized picture ends
 * the run at once (FFmpeg would skip the frame and carry on, and the job complete with frames
 * missing); so does the watchdog. Resolves with the kept stderr lines, which carry loudnorm's
 * measurement.
 */
export async function runFfmpeg(args: string[], options: FfmpegRunOptions = {}): Promise<{ stderr: string }> {
  const { durationSeconds, onProgress, log } = options;
  const durationUs = (durationSeconds ?? 0) * 1e6;
  const started = performance.now();
  log?.({ stage: "ffmpeg-start", mediaSeconds: durationSeconds ?? 0 });
  let pending = "";
  let furthest = -1;
  const result = await spawnTool("ffmpeg", args, options, {
    watchdog: options.watchdog ?? DEFAULT_WATCHDOG,
    span: { mediaSeconds: durationSeconds },
    onStderrLine: pictureRefusal,
    onStdout(chunk, progressed) {
      const lines = (pending + chunk).split("\n");
      pending = lines.pop() ?? "";
      for (const line of lines) {
        const outTime = outTimeFromProgressLine(line);
        if (outTime === null || outTime <= furthest) continue;
        furthest = outTime;
        progressed();
        if (durationUs > 0 && onProgress) onProgress(Math.min(1, outTime / durationUs));
      }
    },
  });
  log?.({ stage: "ffmpeg-end", mediaSeconds: durationSeconds ?? 0, wallSeconds: (performance.now() - started) / 1000 });
  return { stderr: result.stderrLines.join("\n") };
}

/**
 * How much of ffprobe's report is read into memory: a stream summary is a few KiB, but a file's
 * tags are printed whole, and a crafted file could carry gigabytes of them.
 */
export const MAX_PROBE_REPORT_BYTES = 8 * 1024 * 1024;

/**
 * ffprobe's report (stdout), and its kept stderr lines: where it says why a stream has no size.
 * A report over MAX_PROBE_REPORT_BYTES refuses the file; one as long as the source (a packet per
 * line) goes to `onReport` as it comes instead, and the result's stdout is empty.
 */
export async function runFfprobe(
  args: string[],
  options: RunOptions & { onReport?(chunk: string): void } = {},
): Promise<Spawned> {
  const { onReport } = options;
  return spawnTool("ffprobe", args, options, {
    watchdog: options.watchdog ?? DEFAULT_WATCHDOG,
    span: { probe: true },
    maxStdoutBytes: MAX_PROBE_REPORT_BYTES,
    onStdout:
      onReport &&
      ((chunk, progressed) => {
        onReport(chunk);
        progressed();
      }),
  });
}
