import { z } from "zod";
import { jsonObject, storable } from "../../lib/json-body";

/** The envelope only; the timeline inside `edl` is judged by domain/edl/validate.ts. */
export const validateEdlBody = z.object({
  edl: z.unknown().refine((v) => v !== undefined, "Invalid input"),
});

export const createEdlBody = validateEdlBody.extend({
  metadata: storable(
    jsonObject(
      z.object({
        name: z.string({ error: "Expected a string" }).optional(),
        description: z.string({ error: "Expected a string" }).optional(),
      }),
    ),
  ).optional(),
});
