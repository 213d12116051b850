import { createMiddleware } from "hono/factory";
import type { z } from "zod";
import { UNSTORABLE_TEXT_MESSAGE, unstorableTextPaths } from "../../domain/storable-text";
import type { AppEnv } from "../context";
import { ApiError } from "../errors";

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
      let parsed: unknown;
      try {
        parsed = JSON.parse(await c.req.text());
      } catch {
        throw ApiError.invalidJson();
      }
      const result = schema.safeParse(parsed);
      if (!result.success) throw ApiError.validation(toDetails(result.error));
      c.req.addValidatedData("json", result.data as object);
      await next();
    },
  );
  return Object.assign(middleware, { bodySchema: schema });
}

export function toDetails(error: z.ZodError): { field: string; message: string }[] {
  return error.issues.map((issue) => ({
    field: issue.path.length ? issue.path.join(".") : "body",
    message: issue.message,
  }));
}

/** For fields stored as the client sent them (caller metadata): refuses what Postgres cannot hold. */
export function storable<T extends z.ZodType>(schema: T) {
  return schema.superRefine((value, ctx) => {
    for (const path of unstorableTextPaths(value)) ctx.addIssue({ code: "custom", message: UNSTORABLE_TEXT_MESSAGE, path: path ? [path] : [] });
  });
}
