/**
 * The EDL document as the reference shows it (docs/contract.md §3.10): the schemas
 * domain/edl/json-schema.ts generates from the validator's own field tables, registered as
 * components of the OpenAPI document.
 */
import type { OpenAPIHono } from "@hono/zod-openapi";
import { edlSchemaComponents } from "../../../domain/edl/json-schema";

export function registerEdlDocument(registry: OpenAPIHono["openAPIRegistry"]): void {
  for (const [name, schema] of Object.entries(edlSchemaComponents()))
    registry.registerComponent("schemas", name, schema);
}
