import { z } from "zod";
import { isAbsoluteHttpUrl } from "../../../domain/urls";

/** Missing fields read "Invalid input"; a bad URL reads "Invalid input URL" (spec, Errors). */
const required = { error: (issue: { input: unknown }) => (issue.input === undefined ? "Invalid input" : undefined) };

export const createJobBody = z.object({
  inputUrl: z
    .unknown()
    .refine((v) => v !== undefined, "Invalid input")
    .refine((v) => v === undefined || isAbsoluteHttpUrl(v), "Invalid input URL")
    .transform((v) => v as string),
  preset: z.string(required).min(1, "Invalid input"),
  // null is taken as "no metadata", like an absent field.
  metadata: z.record(z.string(), z.unknown(), { error: "Expected an object" }).nullish(),
});

const positiveIntOr = (fallback: number) =>
  z
    .string()
    .optional()
    .transform((v) => (v !== undefined && /^\d+$/.test(v) && Number(v) >= 1 ? Number(v) : fallback));

export const MAX_PAGE_SIZE = 100;

export const listJobsQuery = z.object({
  page: positiveIntOr(1),
  limit: positiveIntOr(10).transform((n) => Math.min(n, MAX_PAGE_SIZE)),
  /** Exact match: an unknown status matches nothing rather than being ignored. */
  status: z.string().optional(),
  preset: z.string().optional(),
});
