import SwaggerParser from "@apidevtools/swagger-parser";
import { Ajv2020, type ValidateFunction } from "ajv/dist/2020.js";
import addFormats from "ajv-formats";
import type { OpenAPIV3_1 } from "openapi-types";
import { openApiDocument } from "../../worker/openapi/document";

export type Document = OpenAPIV3_1.Document;
export type Operation = OpenAPIV3_1.OperationObject;
export type Schema = OpenAPIV3_1.SchemaObject;

export const METHODS = ["get", "put", "post", "delete", "patch"] as const;

/** The document the Worker serves, with every $ref resolved (a fresh copy each call). */
export async function dereferencedDocument(): Promise<Document> {
  return (await SwaggerParser.dereference(structuredClone(openApiDocument()) as never)) as Document;
}

export function operationsOf(
  document: Document,
): { method: (typeof METHODS)[number]; path: string; operation: Operation }[] {
  return Object.entries(document.paths ?? {}).flatMap(([path, item]) =>
    METHODS.flatMap((method) => (item?.[method] ? [{ method, path, operation: item[method] as Operation }] : [])),
  );
}

/** JSON Schema 2020-12 (what OpenAPI 3.1 uses), formats checked; OpenAPI's own keywords allowed. */
export function schemaValidator(): (schema: Schema) => ValidateFunction {
  const ajv = new Ajv2020({ allErrors: true, strict: false });
  addFormats.default(ajv);
  const compiled = new WeakMap<object, ValidateFunction>();
  return (schema) => {
    let validate = compiled.get(schema);
    if (!validate) {
      validate = ajv.compile(schema);
      compiled.set(schema, validate);
    }
    return validate;
  };
}

export function describeErrors(validate: ValidateFunction): string {
  return (validate.errors ?? []).map((e) => `${e.instancePath || "/"} ${e.message}`).join("; ");
}
