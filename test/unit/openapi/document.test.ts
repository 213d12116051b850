import SwaggerParser from "@apidevtools/swagger-parser";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { validateEdl } from "../../../domain/edl/validate";
import { createApp } from "../../../worker/app";
import { openApiDocument } from "../../../worker/openapi/document";
import { OPENAPI_PATH } from "../../../worker/openapi/reference";
import {
  describeErrors,
  dereferencedDocument,
  operationsOf,
  schemaValidator,
  type Operation,
  type Schema,
} from "../../support/openapi";
import { validEdl } from "../edl/arbitraries";
import { validEdl11 } from "../edl/arbitraries-1-1";

const API = "/api/v1";
const PLAY = "/play/";

describe("the OpenAPI document", () => {
  it("is a valid OpenAPI 3.1 document", async () => {
    const document = openApiDocument();
    expect(document.openapi).toBe("3.1.0");
    await expect(SwaggerParser.validate(structuredClone(document) as never)).resolves.toBeTruthy();
  });

  it("documents exactly the routes the app serves under /api/v1, and no internal route", () => {
    const served = new Set(
      createApp()
        .routes.filter((r) => r.method !== "ALL" && r.path.startsWith(`${API}/`) && r.path !== OPENAPI_PATH)
        .map((r) => `${r.method} ${r.path.slice(API.length).replaceAll(/:(\w+)/g, "{$1}")}`),
    );
    const documented = operationsOf(openApiDocument() as never)
      .filter(({ path }) => !path.startsWith(PLAY))
      .map(({ method, path }) => `${method.toUpperCase()} ${path}`);
    expect(documented.sort()).toEqual([...served].sort());
    expect(documented).toHaveLength(11);
    expect(documented.some((op) => op.includes("internal"))).toBe(false);
  });

  it("documents the playback route at the host's root, keyless, as the app serves it (docs/playback.md)", async () => {
    const served = createApp().routes.filter((r) => r.path.startsWith(PLAY) && r.method !== "ALL");
    expect(served.map((r) => `${r.method} ${r.path}`).sort()).toEqual([
      "GET /play/:jobId/:token/*",
      "HEAD /play/:jobId/:token/*",
    ]);
    const document = await dereferencedDocument();
    const playPaths = Object.keys(document.paths ?? {}).filter((path) => path.startsWith(PLAY));
    expect(playPaths).toEqual(["/play/{jobId}/{token}/{member}"]);
    const item = document.paths![playPaths[0]!]!;
    expect(Object.keys(item).filter((key) => key !== "servers" && key !== "parameters")).toEqual(["get"]);
    const operation = item.get!;
    expect(operation.security).toEqual([]);
    expect(operation.servers?.map((s) => s.url) ?? item.servers?.map((s) => s.url)).toEqual(["/"]);
    expect(Object.keys(operation.responses ?? {}).sort()).toEqual(["200", "206", "403", "404", "405"]);
    expect(Object.keys((operation.responses!["200"] as { content: object }).content)).toEqual(
      expect.arrayContaining(["application/vnd.apple.mpegurl", "application/dash+xml", "video/mp4"]),
    );
  });

  it("every operation documents 401 (or optional auth) and 500, each with a JSON schema and example", async () => {
    for (const { method, path, operation } of operationsOf(await dereferencedDocument())) {
      // The playback route answers players, not API clients: no key to refuse, media for bodies.
      if (path.startsWith(PLAY)) continue;
      const statuses = Object.keys(operation.responses ?? {});
      expect(statuses, `${method} ${path}`).toEqual(expect.arrayContaining(["401", "500"]));
      for (const [status, response] of Object.entries(operation.responses ?? {})) {
        const media = (response as { content?: Record<string, { schema?: unknown; examples?: object }> }).content?.[
          "application/json"
        ];
        expect(media?.schema, `${method} ${path} ${status}`).toBeDefined();
        expect(Object.keys(media?.examples ?? {}).length, `${method} ${path} ${status} has an example`).toBeGreaterThan(
          0,
        );
      }
    }
  });

  it("every documented example matches its schema: bodies, responses, parameters and the webhook", async () => {
    const document = await dereferencedDocument();
    const validator = schemaValidator();
    const checked: string[] = [];
    const check = (
      where: string,
      schema: Schema | undefined,
      examples: Record<string, { value?: unknown }> | undefined,
    ) => {
      for (const [name, example] of Object.entries(examples ?? {})) {
        const validate = validator(schema as Schema);
        expect(validate(example.value), `${where} example ${name}: ${describeErrors(validate)}`).toBe(true);
        checked.push(`${where} ${name}`);
      }
    };
    type Media = { schema?: Schema; examples?: Record<string, { value?: unknown }> };
    const operations = [
      ...operationsOf(document).map((o) => ({ ...o, where: `${o.method} ${o.path}` })),
      ...Object.entries(document.webhooks ?? {}).map(([name, item]) => ({
        where: `webhook ${name}`,
        operation: (item as { post: Operation }).post,
      })),
    ];
    for (const { where, operation } of operations) {
      for (const parameter of (operation.parameters ?? []) as {
        name: string;
        schema?: Schema;
        examples?: Record<string, { value?: unknown }>;
      }[]) {
        check(`${where} parameter ${parameter.name}`, parameter.schema, parameter.examples);
      }
      const body = (operation.requestBody as { content?: Record<string, Media> } | undefined)?.content?.[
        "application/json"
      ];
      check(`${where} request`, body?.schema, body?.examples);
      for (const [status, response] of Object.entries(operation.responses ?? {})) {
        const media = (response as { content?: Record<string, Media> }).content?.["application/json"];
        check(`${where} ${status}`, media?.schema, media?.examples);
      }
    }
    // Enough to know the loop saw the examples at all: every operation has several.
    expect(checked.length).toBeGreaterThan(60);
  });

  it("a schema rejects what the service would not send (the examples check can fail)", async () => {
    const document = await dereferencedDocument();
    const jobSchema = (
      document.paths!["/jobs/{id}"]!.get!.responses!["200"] as { content: Record<string, { schema: Schema }> }
    ).content["application/json"].schema;
    const validate = schemaValidator()(jobSchema);
    expect(validate({ id: "not-a-uuid", status: "done" })).toBe(false);
    const bare = (
      document.paths!["/jobs/{id}/download-url"]!.get!.responses!["404"] as {
        content: Record<string, { schema: Schema }>;
      }
    ).content["application/json"].schema;
    expect(schemaValidator()(bare)({ error: "Not found", message: "Job not found" })).toBe(false);
  });

  it("the list's page and limit are documented as the API takes them: no bound it does not enforce, the cap and the fallback said", async () => {
    const document = await dereferencedDocument();
    const parameters = document.paths!["/jobs"]!.get!.parameters as {
      name: string;
      schema: Schema;
      description?: string;
    }[];
    const parameter = (name: string) => parameters.find((p) => p.name === name)!;
    // The API answers each of these (0 falls back to the default, 1000 is capped), so a client checking the document must not refuse them.
    for (const name of ["page", "limit"]) {
      const validate = schemaValidator()(parameter(name).schema);
      for (const value of [0, 1, 1000])
        expect(validate(value), `${name}=${value}: ${describeErrors(validate)}`).toBe(true);
    }
    expect(parameter("limit").description).toMatch(/over 100 is taken as 100.*falls back to 10/);
    expect(parameter("page").description).toMatch(/falls back to 1/);
  });

  it("each creation's 201 declares the Idempotent-Replayed header a replay carries", async () => {
    const document = await dereferencedDocument();
    for (const path of ["/jobs", "/edl"]) {
      const created = document.paths![path]!.post!.responses!["201"] as {
        headers?: Record<string, { schema?: Schema }>;
      };
      expect(created.headers?.["Idempotent-Replayed"]?.schema, `POST ${path}`).toMatchObject({ enum: ["true"] });
    }
  });

  it("audioBitrate's example is an audio bitrate, not the video's", async () => {
    const output = (await dereferencedDocument()).components!.schemas!.EdlOutput as {
      properties: Record<string, { example?: string }>;
    };
    expect(Number.parseInt(output.properties.audioBitrate.example!, 10)).toBeLessThanOrEqual(320);
  });

  it("every timeline the validator accepts fits the documented EDL document schema", async () => {
    const document = await dereferencedDocument();
    const validate = schemaValidator()(document.components!.schemas!.EdlDocument as Schema);
    fc.assert(
      fc.property(validEdl({ maxVideoClips: 4, maxExtraTracks: 3, maxClipsPerExtraTrack: 3, urls: 4 }), (edl) => {
        expect(validateEdl(edl, "enterprise").errors).toEqual([]);
        expect(validate(edl), describeErrors(validate)).toBe(true);
      }),
      { numRuns: 300 },
    );
  });

  it("every 1.1 timeline the validator accepts fits the documented EDL document schema, and only the 1.1 branch", async () => {
    const schemas = (await dereferencedDocument()).components!.schemas!;
    const validate = schemaValidator()(schemas.EdlDocument as Schema);
    const only10 = schemaValidator()(schemas.EdlDocumentV1_0 as Schema);
    fc.assert(
      fc.property(validEdl11({ maxVideoClips: 4, maxExtraTracks: 3, maxClipsPerExtraTrack: 3, urls: 4 }), (edl) => {
        expect(validateEdl(edl, "enterprise").errors).toEqual([]);
        expect(validate(edl), describeErrors(validate)).toBe(true);
        expect(only10(edl)).toBe(false);
      }),
      { numRuns: 300 },
    );
  });

  it("every example inside the EDL schemas (1.0 and 1.1 fields) fits the field it illustrates", async () => {
    const schemas = (await dereferencedDocument()).components!.schemas!;
    const validator = schemaValidator();
    const checked: string[] = [];
    const walk = (where: string, schema: Schema) => {
      const { example, ...rest } = schema as Schema & { example?: unknown };
      if (example !== undefined) {
        const validate = validator(rest as Schema);
        expect(validate(example), `${where}: ${describeErrors(validate)}`).toBe(true);
        checked.push(where);
      }
      const properties = (schema as { properties?: Record<string, Schema> }).properties ?? {};
      for (const [key, property] of Object.entries(properties)) walk(`${where}.${key}`, property);
    };
    for (const [name, schema] of Object.entries(schemas)) if (name.startsWith("Edl")) walk(name, schema as Schema);
    for (const field of ["transition", "crop", "transform", "filters", "freeze"])
      expect(checked).toContain(`EdlVideoClipV1_1.${field}`);
    expect(checked).toEqual(expect.arrayContaining(["EdlCaptionClip.cues", "EdlCaptionClip.src"]));
  });
});
