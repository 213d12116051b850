import { ENCODER_HEAP_MIB } from "../encoder/memory";

/**
 * V8 flags for the processes that stream media through Node: the encoder, and the process that
 * hosts the local cloud (`npm run dev`, the benchmarks). Their live heaps are small (10–35 MB),
 * so V8's old-generation limit sat just above them, and the stream objects promoted while
 * hundreds of MB passed through set off a mark-compact every few MB: 28 in one encoder during a
 * 2-minute split job, and 37–76 in the local cloud's process, whose GC threads took 2.8 s of CPU
 * out of a 23 s job on the cores the encodes ran on. A larger initial old space lets that garbage
 * die young (docs/operations.md). Node refuses these flags in NODE_OPTIONS, so each command line
 * carries them: encoder/Dockerfile's, package.json's scripts, and the encoders `npm run dev` starts.
 * The encoder's heap is capped as well: what it parses in Node is bounded, and the rest of the
 * machine is its jobs' (encoder/memory.ts).
 */
export const ENCODER_NODE_FLAGS = ["--initial-old-space-size=64", `--max-old-space-size=${ENCODER_HEAP_MIB}`];
export const CLOUD_NODE_FLAGS = ["--initial-old-space-size=256"];
