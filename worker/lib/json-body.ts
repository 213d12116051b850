import { createMiddleware } from "hono/factory";
import { z } from "zod";
import {
  NON_FINITE_NUMBER_MESSAGE,
  nonFiniteNumberPaths,
  UNSTORABLE_TEXT_MESSAGE,
  unstorableTextPaths,
} from "../../domain/storable-text";
import type { AppEnv } from "../context";
import { ApiError } from "../errors";
import { jsonShapeProblem } from "./json-limits";

/** The body as parsed JSON; a body too deep or too large to parse safely is refused like one that is not JSON. */
async function parseBody(text: Promise<string>): Promise<unknown> {
  let raw: string;
  try {
    raw = await text;
  } catch {
    throw ApiError.invalidJson("The request body could not be read");
  }
  const problem = jsonShapeProblem(raw);
  if (problem) throw ApiError.invalidJson(`The request body ${problem}`);
  try {
    return JSON.parse(raw);
  } catch {
    throw ApiError.invalidJson();
  }
}

/**
 * Parses the body as JSON whatever its Content-Type, then validates it. Not zValidator (nor the
 * validators @hono/zod-openapi adds for a documented body): those refuse or skip bodies sent
 * without a JSON Content-Type and report malformed JSON as Hono's own HTTPException, while the
 * contract wants `Invalid JSON` and `Validation error` bodies. The middleware carries its schema
 * so a route can be checked to validate with the very schema it documents.
 */
export function jsonBody<T extends z.ZodType>(schema: T) {
  const middleware = createMiddleware<AppEnv, string, { in: { json: z.input<T> }; out: { json: z.output<T> } }>(
    async (c, next) => {
      const result = schema.safeParse(await parseBody(c.req.text()));
      if (!result.success) throw ApiError.validation(toDetails(result.error));
      c.req.addValidatedData("json", result.data as object);
      await next();
    },
  );
  return Object.assign(middleware, { bodySchema: schema });
}

/** A failed parse as the `details` of a `Validation error` (docs/contract.md §8.1). */
export function toDetails(error: z.ZodError): { field: string; message: string }[] {
  return error.issues.map((issue) => ({
    field: issue.path.length ? issue.path.join(".") : "body",
    message: issue.message,
  }));
}

const isJsonObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/**
 * A JSON object checked against `fields` and passed on as parsed. zod's record and loose objects
 * build a copy key by key, and on the copy a `__proto__` key sets the prototype instead of a
 * property: a caller's `{"__proto__": …}` would silently vanish from what is stored.
 */
export function jsonObject(fields?: z.ZodObject) {
  return z.custom<Record<string, unknown>>(isJsonObject, { error: "Expected an object" }).superRefine((value, ctx) => {
    const checked = fields?.safeParse(value);
    if (!checked || checked.success) return;
    for (const issue of checked.error.issues)
      ctx.addIssue({ code: "custom", message: issue.message, path: issue.path });
  });
}

/**
 * For fields stored as the client sent them (caller metadata): refuses what Postgres cannot hold,
 * and numbers that would be stored as null.
 */
export function storable<T extends z.ZodType>(schema: T) {
  return schema.superRefine((value, ctx) => {
    for (const path of unstorableTextPaths(value))
      ctx.addIssue({ code: "custom", message: UNSTORABLE_TEXT_MESSAGE, path: path ? [path] : [] });
    for (const path of nonFiniteNumberPaths(value))
      ctx.addIssue({ code: "custom", message: NON_FINITE_NUMBER_MESSAGE, path: path ? [path] : [] });
  });
}
