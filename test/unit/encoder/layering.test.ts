import { readdir, readFile } from "node:fs/promises";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { describe, expect, it } from "vitest";

const encoder = resolve(dirname(fileURLToPath(import.meta.url)), "../../../encoder");
const jobs = join(encoder, "jobs");

/** Every TypeScript module under `dir`, recursively. */
async function modulesUnder(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  return entries.filter((e) => e.isFile() && e.name.endsWith(".ts")).map((e) => join(e.parentPath, e.name));
}

/**
 * Every module the source of `file` imports, type-only, re-exported and dynamic imports included
 * (TypeScript's own scanner reads them), as absolute paths for relative specifiers.
 */
function importsIn(source: string, file: string): string[] {
  const { importedFiles } = ts.preProcessFile(source, true, true);
  return importedFiles.map(({ fileName }) => (fileName.startsWith(".") ? resolve(dirname(file), fileName) : fileName));
}

const intoJobs = (imports: string[]) => imports.filter((target) => !relative(jobs, target).startsWith(".."));

describe("the encoder's layers: FFmpeg, the timeline compiler and the I/O edges know nothing of jobs", () => {
  it.each(["ffmpeg", "timeline", "source", "upload", "http"])(
    "no module under encoder/%s imports from encoder/jobs",
    async (layer) => {
      const files = await modulesUnder(join(encoder, layer));
      const imports = await Promise.all(
        files.map(async (file) => ({ file, imports: importsIn(await readFile(file, "utf8"), file) })),
      );
      // The scan sees the layer's own imports, so an empty result means nothing was read.
      expect(imports.flatMap((i) => i.imports).length).toBeGreaterThan(files.length);
      const upward = imports.flatMap(({ file, imports }) =>
        intoJobs(imports).map((target) => `${relative(encoder, file)} → ${relative(encoder, target)}`),
      );
      expect(upward).toEqual([]);
    },
  );

  it("the scan sees every form of import into jobs/, and only those", () => {
    const source = [
      'import type { StageLog } from "../jobs/stage-log";',
      'export { processDelivery } from "../jobs/pipeline";',
      'const scope = await import("../jobs/job-scope");',
      'import { JobFailure } from "../failure";',
      'import { head } from "./args/command";',
      'import { spawn } from "node:child_process";',
    ].join("\n");
    const found = intoJobs(importsIn(source, join(encoder, "ffmpeg", "run.ts")));
    expect(found.map((target) => relative(encoder, target))).toEqual([
      "jobs/stage-log",
      "jobs/pipeline",
      "jobs/job-scope",
    ]);
  });
});
