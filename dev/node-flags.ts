import { ENCODER_HEAP_MIB } from "../encoder/memory";

/**
 * V8 flags for the processes that stream media through Node: the encoder, and the process that
 * hosts the local cloud (`npm run dev`, the benchmarks). Their live heaps are small, so with V8's
 * defaults the old-generation limit sits just above them, and the stream objects promoted while
 * hundreds of MB pass through set off a mark-compact every few MB, on the cores the encodes run
 * on. A larger initial old space lets that garbage die young (docs/operations.md#memory). Node
 * refuses these flags in NODE_OPTIONS, so each command line carries them: encoder/Dockerfile's,
 * package.json's scripts, and the encoders `npm run dev` starts. The encoder's heap is capped as
 * well: what it parses in Node is bounded, and the rest of the machine is its jobs'
 * (encoder/memory.ts).
 */
export const ENCODER_NODE_FLAGS = ["--initial-old-space-size=64", `--max-old-space-size=${ENCODER_HEAP_MIB}`];
export const CLOUD_NODE_FLAGS = ["--initial-old-space-size=256"];
