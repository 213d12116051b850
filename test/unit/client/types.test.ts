import { readFile } from "node:fs/promises";
import { describe, expect, it } from "vitest";
import { generateTypes, TYPES_FILE } from "../../../client/codegen";

describe("client types", () => {
  it("client/generated/openapi.d.ts is what `npm run client:types` makes from the current document", async () => {
    const committed = await readFile(TYPES_FILE, "utf8");
    const fresh = await generateTypes();
    expect(committed === fresh, "stale client types: run `npm run client:types` and commit the result").toBe(true);
    expect(fresh).toContain('"/jobs/{id}/download-url"');
  });
});
