/**
 * What a failed job meets, whichever part of the encoder it met it in: the source guard, the
 * download, FFmpeg, the timeline, the upload, or an error nobody expected.
 */
export type FailureKind =
  | "source-refused"
  | "download"
  | "duration-exceeded"
  | "unsuitable-source"
  | "invalid-timeline"
  | "ffmpeg"
  | "encoder-setup"
  | "upload"
  | "scratch-missing"
  | "memory-exceeded"
  | "internal";

/**
 * Whether another attempt may help follows from the kind alone. The contract retries download
 * and FFmpeg failures and not a source that is too long; a refused source, one that lacks what
 * the job needs, and a timeline that asks for what cannot be done fail the same way every time.
 */
const RETRYABLE: Record<FailureKind, boolean> = {
  "source-refused": false,
  download: true,
  "duration-exceeded": false,
  "unsuitable-source": false,
  "invalid-timeline": false,
  ffmpeg: true,
  // A tool missing from this machine is missing on the next attempt too.
  "encoder-setup": false,
  upload: true,
  // A split job's file in storage was deleted (the job ended meanwhile): it will not come back.
  "scratch-missing": false,
  // The limit is the same on every attempt: FFmpeg would run out at the same point again.
  "memory-exceeded": false,
  // Unexplained, so perhaps passing: it gets the attempts the contract gives.
  internal: true,
};

const INTERNAL_MESSAGE = "Encoding failed because of an internal encoder error.";

const PLAYLIST_MESSAGE =
  "The source is a playlist or manifest, not a media file. Playlists (HLS, DASH, concat) reference further files and are not accepted as sources.";

/**
 * The one way a job fails. `message` is what the job's errorMessage says, so the constructors
 * build it only from words the customer may read (never a path, a stack trace or an internal
 * address); whatever the logs need beyond it travels as `cause`, which the message never
 * repeats. `duration` is the source's, when it was measured before the failure.
 */
export class JobFailure extends Error {
  readonly retryable: boolean;
  readonly duration?: number;

  private constructor(
    readonly kind: FailureKind,
    message: string,
    options: { cause?: unknown; duration?: number } = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = "JobFailure";
    this.retryable = RETRYABLE[kind];
    this.duration = options.duration;
  }

  /** The source guard said no: the URL, its address, its size. */
  static sourceRefused(reason: string): JobFailure {
    return new JobFailure("source-refused", `Source refused: ${reason}`);
  }

  /** The source reads as a playlist or manifest, which would make FFmpeg open further files. */
  static playlistSource(): JobFailure {
    return new JobFailure("source-refused", PLAYLIST_MESSAGE);
  }

  /** The source could not be fetched (network, the server's answer, a timeout). */
  static download(reason: string, cause?: unknown): JobFailure {
    return new JobFailure("download", `Download failed: ${reason}`, { cause });
  }

  /** The source is longer than the account's plan allows; the job records its duration. */
  static durationExceeded(sourceSeconds: number, maxSeconds: number, planName: string): JobFailure {
    return new JobFailure(
      "duration-exceeded",
      `DURATION_EXCEEDED: the source is ${sourceSeconds.toFixed(1)} s long; the ${planName} plan allows sources up to ${maxSeconds} s (${maxSeconds / 60} minutes).`,
      { duration: sourceSeconds },
    );
  }

  /** The source decodes but lacks what the job needs (a stream, audible audio, a picture). */
  static unsuitableSource(message: string): JobFailure {
    return new JobFailure("unsuitable-source", message);
  }

  /** The timeline asks for something that cannot be rendered. */
  static invalidTimeline(message: string): JobFailure {
    return new JobFailure("invalid-timeline", message);
  }

  /** FFmpeg or ffprobe failed, or did not give what was asked; `message` is already sanitised. */
  static ffmpeg(message: string, cause?: unknown): JobFailure {
    return new JobFailure("ffmpeg", message, { cause });
  }

  /** The encoder machine lacks something every such job needs. */
  static encoderSetup(message: string): JobFailure {
    return new JobFailure("encoder-setup", message);
  }

  /** The output could not be read or stored. */
  static upload(reason: string, cause?: unknown): JobFailure {
    return new JobFailure("upload", `Upload failed: ${reason}`, { cause });
  }

  /** A split job's input or part output is no longer in storage (docs/scaling.md). */
  static scratchMissing(): JobFailure {
    return new JobFailure("scratch-missing", "A part's input is no longer in storage; the job cannot be finished.");
  }

  /** FFmpeg or ffprobe could not allocate within the memory a job may hold (encoder/memory.ts). */
  static memoryExceeded(limitBytes: number, cause?: unknown): JobFailure {
    const gib = +(limitBytes / 1024 ** 3).toFixed(2);
    return new JobFailure(
      "memory-exceeded",
      `Encoding needs more memory than a job may use on this encoder (${gib} GiB): FFmpeg could not allocate it.`,
      { cause },
    );
  }

  /** An error no code expected: its own words may name internals, so they stay in `cause`. */
  static internal(cause: unknown): JobFailure {
    return new JobFailure("internal", INTERNAL_MESSAGE, { cause });
  }

  /** The failure `err` is: itself when it is one, otherwise an internal failure caused by it. */
  static of(err: unknown): JobFailure {
    return err instanceof JobFailure ? err : JobFailure.internal(err);
  }

  /** The same failure, its message prefixed with where it happened (`Asset for clip "a" …: `). */
  within(context: string): JobFailure {
    return new JobFailure(this.kind, `${context}: ${this.message}`, { cause: this.cause, duration: this.duration });
  }

  /** The cause's own words for the log line, when there is a cause. */
  describeCause(): string | undefined {
    if (this.cause === undefined) return undefined;
    return this.cause instanceof Error ? `${this.cause.name}: ${this.cause.message}` : String(this.cause);
  }
}
