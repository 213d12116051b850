import type { OpenAPIHono, RouteConfig, RouteHandler } from "@hono/zod-openapi";
import type { MiddlewareHandler } from "hono";
import type { z } from "zod";
import type { AppEnv } from "../context";

type JsonBodySchema<R extends RouteConfig> = R["request"] extends {
  body?: { content: { "application/json": { schema: infer S extends z.ZodType } } };
}
  ? S
  : never;

/** What jsonBody hands the handler: the documented body schema's input and output. */
type BodyInput<R extends RouteConfig> = [JsonBodySchema<R>] extends [never]
  ? Record<never, never>
  : { in: { json: z.input<JsonBodySchema<R>> }; out: { json: z.output<JsonBodySchema<R>> } };

/** A handler whose `c.json(...)` bodies and statuses must be ones the route documents. */
export type OperationHandler<R extends RouteConfig> = RouteHandler<R, AppEnv, BodyInput<R>>;

const bodySchemaOf = (middleware: MiddlewareHandler) => (middleware as { bodySchema?: unknown }).bodySchema;

/**
 * `app.openapi()` without the request validators it would add: the route documents its body,
 * query and path parameters, and its middleware reads them as the contract says (jsonBody for
 * bodies of any Content-Type; handlers for queries, which never fail). Registration refuses a
 * route whose documented body is not the schema its jsonBody validates with, so the two cannot
 * drift apart.
 */
export function operation<R extends RouteConfig>(app: OpenAPIHono<AppEnv>, route: R, handler: OperationHandler<R>) {
  const { middleware, ...documented } = route;
  const chain: MiddlewareHandler[] =
    middleware === undefined ? [] : Array.isArray(middleware) ? middleware : [middleware];
  const documentedBody = (route.request?.body?.content["application/json"] as { schema?: unknown } | undefined)?.schema;
  const validatedBody = chain.map(bodySchemaOf).filter((schema) => schema !== undefined);
  if (validatedBody.length > 1 || validatedBody[0] !== documentedBody) {
    throw new Error(
      `${route.method.toUpperCase()} ${route.path}: the documented JSON body must be the schema its jsonBody middleware validates with`,
    );
  }
  app.openAPIRegistry.registerPath(documented);
  const handlers: MiddlewareHandler[] = [...chain, handler as MiddlewareHandler];
  app.on(
    [route.method.toUpperCase()],
    [route.path.replaceAll(/\/{(.+?)}/g, "/:$1")],
    ...(handlers as [MiddlewareHandler]),
  );
}
