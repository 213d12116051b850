import { z } from "zod";

export const claimBody = z.object({ attempt: z.number().int().min(0) });
export const heartbeatBody = z.object({ progress: z.number().min(0).max(1).optional() });
export const completeBody = z.object({ outputKey: z.string().min(1), duration: z.number().nonnegative().nullable() });
export const failBody = z.object({
  errorMessage: z.string().min(1).max(2000),
  attempt: z.number().int().min(0),
  /** No attempt follows: the job is failed now. Otherwise it waits in the queue for its retry. */
  final: z.boolean(),
  duration: z.number().nonnegative().nullable().optional(),
});
