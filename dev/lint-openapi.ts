/**
 * `npm run lint:openapi`: the OpenAPI document the Worker serves, as /api/v1/openapi.json gives
 * it, linted by Redocly CLI with its recommended rules (redocly.yaml holds the exceptions and
 * their reasons). Its output is shown only when it finds something: on Node 20 the CLI prints a
 * deprecation banner every run.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { openApiDocument } from "../worker/openapi/document";

const redocly = createRequire(import.meta.url).resolve("@redocly/cli/bin/cli.js");
const config = fileURLToPath(new URL("../redocly.yaml", import.meta.url));

const dir = mkdtempSync(join(tmpdir(), "openapi-lint-"));
try {
  const file = join(dir, "openapi.json");
  writeFileSync(file, JSON.stringify(openApiDocument(), null, 2));
  const lint = (format: string) =>
    spawnSync(process.execPath, [redocly, "lint", file, "--config", config, `--format=${format}`], {
      encoding: "utf8",
    });
  const { totals } = JSON.parse(lint("json").stdout || "{}") as { totals?: { errors: number; warnings: number } };
  if (totals && totals.errors + totals.warnings === 0) {
    console.log("openapi.json: Redocly's recommended rules pass");
  } else {
    // Read as Redocly writes them: each problem with its place in the document.
    const shown = lint("stylish");
    process.stdout.write(shown.stdout);
    process.stderr.write(shown.stderr);
    process.exitCode = 1;
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
