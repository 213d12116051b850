/**
 * Split encoding (docs/scaling.md): a long preset job is encoded as parts on several encoders,
 * then joined. These are the plan both sides hold, and the storage keys they agree on.
 */
import type { StreamLayout } from "./stream/layout";

/** A frame rate as an exact fraction (30000/1001), so frame times never drift. */
export interface FrameRate {
  num: number;
  den: number;
}

/** One part: exactly `frameCount` source frames from `firstFrame` (0-based, in presentation order). */
export interface SplitPart {
  index: number;
  firstFrame: number;
  frameCount: number;
  /** The source times (seconds, on the source's own clock) of its first frame and of the frame after its last. */
  from: number;
  to: number;
}

export interface SplitPlan {
  fps: FrameRate;
  /** The source's video height, which picks a ladder's rungs the same way on every part. */
  height: number;
  /**
   * Its width and sample aspect, which size a single file's picture: a part's encoder reads its
   * piece as it arrives, before anything could probe it (docs/scaling.md#a-part-exactly-its-frames-in-closed-gops).
   */
  width: number;
  sampleAspect: number;
  totalFrames: number;
  /**
   * A ladder's keyframe interval: its parts but the last are whole numbers of these, so the grid
   * runs on across the joins. A single file's (2 s) only bounds its parts' length from below.
   */
  gopFrames: number;
  parts: SplitPart[];
  /**
   * Whether the source has audio: encoded once for the whole source, never per part, as a task of
   * its own beside the parts (index `parts.length`), which the join copies in.
   */
  audio: boolean;
  /**
   * Where the audio starts against the first video frame, in seconds (negative: before it). The
   * audio's task places the audio so, as the unsplit encode does.
   */
  audioStart: number;
  /**
   * A streaming output's split (docs/playback.md#how-a-stream-is-made): each part writes its
   * segments straight into the stream, reading its own span of the source by ranges; the audio's
   * task writes the audio rendition. Absent for a single file's split.
   */
  stream?: StreamSplit;
  /**
   * A single file's tasks read the source itself, by byte ranges from its origin
   * (docs/scaling.md#parts-that-read-the-source-by-ranges), the video from this stream. Absent:
   * each reads the piece its splitting encoder cut and stored.
   */
  ranges?: { videoIndex: number };
}

export interface StreamSplit {
  /** The stream's renditions, as its first report gave them to the Worker: the finishing task packages them. */
  layout: StreamLayout;
  /** Each part's segments, by part: the number of its first and how many (the last part's runs to the source's end). */
  segments: { first: number; count: number }[];
  /** The source's video and audio streams, and where each starts on the source's own clock (seconds). */
  videoIndex: number;
  videoStart: number;
  audioIndex: number | null;
  audioStart: number | null;
}

/** What a split's tasks read: the source by ranges from its origin (SplitPlan.ranges, or a stream's), or pieces stored. */
export type TaskInput = "ranges" | "pieces";

/**
 * What the claim of a part gives its encoder: the part's lease and failed attempts so far, and
 * what it needs to encode it (the Worker answers it, the encoder reads it). `part` is null for
 * the audio's task.
 */
export interface PartAssignment {
  claim: number;
  attempt: number;
  accountId: string;
  preset: string;
  /** The job's source: a stream's part, or a part of a plan read by ranges, reads its own span of it. */
  inputUrl: string;
  plan: SplitPlan;
  part: SplitPart | null;
}

/** The indices of a plan's tasks: its parts, then the audio's when the source has audio. */
export const taskIndices = (plan: SplitPlan): number[] =>
  Array.from({ length: plan.parts.length + (plan.audio ? 1 : 0) }, (_, index) => index);

/** Parts of a job: at most this many, whatever the settings (a bound on messages and rows per job). */
export const MAX_PARTS = 200;
/** A part's attempts at its work (a failure it reports); the job fails when one part has spent them. */
export const PART_ATTEMPTS = 3;
/** Parts in flight at once over the whole pool when neither PART_PARALLELISM nor a count of the pool (worker/services/pool.ts) sets it. */
export const PART_PARALLELISM = 8;

/** Everything a split job leaves in storage while it runs; deleted when the job ends, however it ends. */
export const scratchPrefix = (jobId: string) => `scratch/${jobId}/`;
/** A part's input: its stretch of the source's video, cut by stream copy. */
export const partInputKey = (jobId: string, index: number) => `${scratchPrefix(jobId)}in/${index}`;
/** The source's audio, copied out once for the audio's task. */
export const audioInputKey = (jobId: string) => `${scratchPrefix(jobId)}in/audio`;
/** A task's output: a part's encoded video, or (index `parts.length`) the encoded audio. */
export const partOutputKey = (jobId: string, index: number) => `${scratchPrefix(jobId)}out/${index}`;
