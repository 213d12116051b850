/**
 * The memory a job's FFmpeg and ffprobe runs may take, so that one job cannot starve the encoder
 * or the job beside it (docs/operations.md#memory). Pure: the caller gives the machine's size.
 */

const MiB = 1024 * 1024;

/**
 * The encoder's own share: its V8 heap limit (`--max-old-space-size` in dev/node-flags.ts and
 * encoder/Dockerfile) and what Node holds outside it (stream buffers, the code itself).
 */
export const ENCODER_HEAP_MIB = 512;
const ENCODER_RESERVE_BYTES = (ENCODER_HEAP_MIB + 256) * MiB;

/** Below this no preset encodes at all: a machine that small gets the floor rather than a limit every job fails. */
const FLOOR_BYTES = 256 * MiB;

/**
 * Bytes of data (RLIMIT_DATA: heap and private mappings, thread stacks included) each FFmpeg or
 * ffprobe run may hold: the configured figure, or the machine's memory less the encoder's share,
 * split between the jobs it runs at once.
 */
export function toolMemoryBytes(opts: { configured?: number; totalBytes: number; concurrency: number }): number {
  if (opts.configured !== undefined) return opts.configured;
  return Math.max(FLOOR_BYTES, Math.floor((opts.totalBytes - ENCODER_RESERVE_BYTES) / opts.concurrency));
}
