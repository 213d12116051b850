import { z } from "zod";
import { outputKeyParts } from "../../../domain/jobs";

export const claimBody = z.object({ attempt: z.number().int().min(0) });
// Stored as a 4-byte real: rounded to one here, or a value too small for it (1e-113) would make
// Postgres refuse the heartbeat with an underflow.
export const heartbeatBody = z.object({
  progress: z.number().min(0).max(1).transform(Math.fround).optional(),
  /** The source's (or timeline's) duration in seconds, sent once the encoder knows it. */
  duration: z.number().nonnegative().optional(),
});
export const completeBody = z.object({
  outputKey: z.string().refine((key) => outputKeyParts(key) !== null, {
    message: "Not an output key: outputs/<account>/<job>/<file name>",
  }),
  duration: z.number().nonnegative().nullable(),
});
export const failBody = z.object({
  errorMessage: z.string().min(1).max(2000),
  attempt: z.number().int().min(0),
  /** No attempt follows: the job is failed now. Otherwise it waits in the queue for its retry. */
  final: z.boolean(),
  duration: z.number().nonnegative().nullable().optional(),
});
