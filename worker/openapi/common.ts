import { z } from "@hono/zod-openapi";
import { PLAN_IDS } from "../../domain/plans";

/** ISO 8601 in UTC with milliseconds and a trailing Z (docs/contract.md §2.2). */
export const Timestamp = z.iso.datetime({ precision: 3 }).openapi({ example: "2026-11-20T09:30:00.000Z" });

export const PlanId = z.enum(PLAN_IDS).openapi("PlanId", { description: "Plan identifier." });

/** Security requirement names used by the routes; the scheme is registered with the document. */
export const BEARER = "apiKey";
type SecurityRequirement = Record<string, string[]>;
export const authenticated: SecurityRequirement[] = [{ [BEARER]: [] }];
/** GET /presets: the key is optional, so the empty requirement comes first. */
export const optionallyAuthenticated: SecurityRequirement[] = [{}, { [BEARER]: [] }];

/** A named example as OpenAPI's Example Object holds it. */
interface NamedExample {
  summary: string;
  value: unknown;
}

/** A JSON request body whose schema is the one jsonBody validates with. */
export function jsonRequest<S extends z.ZodType>(
  schema: S,
  examples: Record<string, NamedExample>,
  description?: string,
) {
  return {
    required: true,
    description,
    content: { "application/json": { schema, examples } },
  } as const;
}

export function jsonResponse<S extends z.ZodType>(
  description: string,
  schema: S,
  examples: Record<string, NamedExample>,
) {
  return { description, content: { "application/json": { schema, examples } } };
}

/**
 * Metadata that documents a schema as the registered component `name` and nothing more: OpenAPI
 * 3.1 lets a `$ref` stand alone for a value validated elsewhere. zod-to-openapi writes the `$ref`
 * through as given, though its metadata type lists no such key.
 */
export function componentRef(name: string) {
  return { $ref: `#/components/schemas/${name}` } as { description?: string };
}
