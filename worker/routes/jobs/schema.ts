import { z } from "zod";
import { isAbsoluteHttpUrl } from "../../../domain/urls";
import { jsonObject, storable } from "../../lib/json-body";

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
  metadata: storable(jsonObject()).nullish(),
});

/**
 * A positive integer, capped: any page past the last one lists nothing anyway, and the cap keeps
 * the row offset inside Postgres' bigint however many digits a client sends.
 */
const positiveIntOr = (fallback: number, max: number) =>
  z
    .string()
    .optional()
    .transform((v) => (v !== undefined && /^\d+$/.test(v) && Number(v) >= 1 ? Math.min(Number(v), max) : fallback));

export const MAX_PAGE_SIZE = 100;
export const MAX_PAGE = 1_000_000_000;

/**
 * Never fails: bad page/limit values fall back to their defaults (spec, GET /jobs). Read from
 * `c.req.query()`, which keeps one value of a repeated parameter.
 */
export const listJobsQuery = z.object({
  page: positiveIntOr(1, MAX_PAGE),
  limit: positiveIntOr(10, MAX_PAGE_SIZE),
  /** Exact match: an unknown status matches nothing rather than being ignored. */
  status: z.string().optional(),
  preset: z.string().optional(),
});
