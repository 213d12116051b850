import { createRoute, OpenAPIHono, z } from "@hono/zod-openapi";
import { describe, expect, it } from "vitest";
import type { AppEnv } from "../../../worker/context";
import { renderError } from "../../../worker/errors";
import { jsonBody } from "../../../worker/lib/json-body";
import { jsonRequest } from "../../../worker/openapi/common";
import { operation } from "../../../worker/openapi/route";

const Body = z.object({ name: z.string() });
const Other = z.object({ name: z.string() });

const responses = {
  200: { description: "ok", content: { "application/json": { schema: z.object({ name: z.string() }) } } },
};
const routeWith = (validated: z.ZodType | undefined, documented: z.ZodType | undefined) =>
  createRoute({
    method: "post",
    path: "/things",
    middleware: validated ? [jsonBody(validated)] : [],
    request: documented ? { body: jsonRequest(documented, {}) } : undefined,
    responses,
  });
const matched = createRoute({
  method: "post",
  path: "/things",
  middleware: [jsonBody(Body)] as const,
  request: { body: jsonRequest(Body, {}) },
  responses,
});

describe("operation(): a documented route whose body the contract's middleware reads", () => {
  it("refuses a route whose documented body is not the schema its jsonBody validates with, either way round", () => {
    const app = new OpenAPIHono<AppEnv>();
    expect(() => operation(app, routeWith(Body, Other), (c) => c.json({ name: "x" }, 200))).toThrow(
      /POST \/things: the documented JSON body/,
    );
    expect(() => operation(app, routeWith(Body, undefined), (c) => c.json({ name: "x" }, 200))).toThrow();
    expect(() => operation(app, routeWith(undefined, Body), (c) => c.json({ name: "x" }, 200))).toThrow();
  });

  it("registers the path in the document and serves it without @hono/zod-openapi's validators", async () => {
    const app = new OpenAPIHono<AppEnv>();
    app.onError(renderError);
    operation(app, matched, (c) => c.json({ name: c.req.valid("json").name }, 200));
    const document = app.getOpenAPI31Document({ openapi: "3.1.0", info: { title: "t", version: "1" } });
    expect(Object.keys(document.paths ?? {})).toEqual(["/things"]);
    // No JSON Content-Type, still parsed (zod-openapi's own gate would answer 415).
    const plain = await app.request("/things", {
      method: "POST",
      body: '{"name":"a"}',
      headers: { "Content-Type": "text/plain" },
    });
    expect(plain.status).toBe(200);
    expect(await plain.json()).toEqual({ name: "a" });
    const broken = await app.request("/things", {
      method: "POST",
      body: "{",
      headers: { "Content-Type": "application/json" },
    });
    expect(await broken.json()).toMatchObject({ error: "Invalid JSON" });
    const invalid = await app.request("/things", { method: "POST", body: "{}" });
    expect(await invalid.json()).toEqual({
      error: "Validation error",
      message: "Invalid request parameters",
      details: [{ field: "name", message: expect.any(String) }],
    });
  });
});
