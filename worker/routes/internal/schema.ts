import { z } from "zod";
import { outputKeyParts } from "../../../domain/jobs";

/** Which dispatch the delivery carries (the message's body, signed by QStash). */
export const claimBody = z.object({ dispatch: z.number().int().min(0) });
/** The claim a heartbeat or report belongs to: the number the claim's answer gave the encoder. */
const claimNumber = z.number().int().min(1);
export const heartbeatBody = z.object({
  claim: claimNumber,
  // Stored as a 4-byte real: rounded to one here, or a value too small for it (1e-113) would make
  // Postgres refuse the heartbeat with an underflow.
  progress: z.number().min(0).max(1).transform(Math.fround).optional(),
  /** The source's (or timeline's) duration in seconds, sent once the encoder knows it. */
  duration: z.number().nonnegative().optional(),
});
export const completeBody = z.object({
  claim: claimNumber,
  outputKey: z.string().refine((key) => outputKeyParts(key) !== null, {
    message: "Not an output key (one that names an account, a job and a file name)",
  }),
  duration: z.number().nonnegative().nullable(),
});
export const failBody = z.object({
  claim: claimNumber,
  errorMessage: z.string().min(1).max(2000),
  /** A failure at the source (download, decode) another attempt may not meet; the Worker decides whether one follows. */
  retryable: z.boolean(),
  duration: z.number().nonnegative().nullable().optional(),
});
