import { z } from "zod";

/** The envelope only; the timeline inside `edl` is judged by domain/edl/validate.ts. */
export const validateEdlBody = z.object({
  edl: z.unknown().refine((v) => v !== undefined, "Invalid input"),
});

export const createEdlBody = validateEdlBody.extend({
  metadata: z
    .object({
      name: z.string({ error: "Expected a string" }).optional(),
      description: z.string({ error: "Expected a string" }).optional(),
    })
    .passthrough()
    .optional(),
});
