import { readdir, readFile } from "node:fs/promises";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { describe, expect, it } from "vitest";

/**
 * The Worker's layers, top first. A module imports from its own layer and the layers below it,
 * never from one above (type-only, re-exported and dynamic imports included), so each layer can
 * be read, and tested, without the ones that use it. Paths are folders or files from the
 * repository's root; the longest path that holds a module gives its layer.
 */
const LAYERS = [
  {
    // The Worker's entry (fetch and the cron's sweep) and the app that mounts every route.
    name: "top",
    paths: ["worker/index.ts", "worker/app.ts"],
  },
  {
    // One operation per file, the dashboard's pages and routes, and the OpenAPI document and
    // reference assembled from the routes.
    name: "routes",
    paths: ["worker/routes", "worker/dashboard", "worker/openapi"],
  },
  {
    // What runs before a handler: the body's size, the request's clients, the key lookup, Idempotency-Key.
    name: "middleware",
    paths: ["worker/middleware"],
  },
  {
    // The service's rules (job states, quota, callers, webhooks, the sweep), the dashboard's
    // accounts and sessions, error classes with the schemas of their bodies, the vocabulary the
    // routes document themselves with, and the request's context.
    name: "lib",
    paths: [
      "worker/lib",
      "worker/dashboard/auth",
      "worker/dashboard/lib",
      "worker/context.ts",
      "worker/errors.ts",
      "worker/openapi/common.ts",
      "worker/openapi/errors.ts",
      "worker/openapi/route.ts",
    ],
  },
  {
    // The clients of the outside world (database, storage, queue, cache, their timing) and the
    // bindings they are made from.
    name: "services",
    paths: ["worker/services", "worker/env.ts"],
  },
  {
    // Pure TypeScript the encoder shares, and the tables' shape.
    name: "domain",
    paths: ["domain", "drizzle/schema"],
  },
] as const;

type LayerName = (typeof LAYERS)[number]["name"];

const root = resolve(dirname(fileURLToPath(import.meta.url)), "../../..");
const SCANNED = ["worker", "domain", "drizzle/schema"];

/** A module's path from the root, without its extension, as an import specifier names it. */
const moduleKey = (path: string) => relative(root, path).replace(/\.(d\.ts|tsx?|m?js|css)$/, "");

const PLACES = LAYERS.flatMap(({ name, paths }, rank) =>
  paths.map((path) => ({ name, rank, key: moduleKey(join(root, path)) })),
).sort((a, b) => b.key.length - a.key.length);

/** The layer a module or folder belongs to, by the longest path that holds it; undefined outside the map. */
function layerOf(path: string): { name: LayerName; rank: number } | undefined {
  const key = moduleKey(path);
  return PLACES.find((place) => key === place.key || key.startsWith(`${place.key}/`));
}

/** Every TypeScript module under `dir`, recursively. */
async function modulesUnder(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  return entries.filter((e) => e.isFile() && /\.tsx?$/.test(e.name)).map((e) => join(e.parentPath, e.name));
}

const scannedModules = async () => (await Promise.all(SCANNED.map((dir) => modulesUnder(join(root, dir))))).flat();

/**
 * The project's own modules the source of `file` imports, type-only, re-exported and dynamic
 * imports included (TypeScript's own scanner reads them), as absolute paths; packages are left out.
 */
function importsIn(source: string, file: string): string[] {
  const { importedFiles } = ts.preProcessFile(source, true, true);
  return importedFiles
    .filter(({ fileName }) => fileName.startsWith("."))
    .map(({ fileName }) => resolve(dirname(file), fileName));
}

/** What `file` imports from a layer above its own, or from outside the map, each as `target (layer)`. */
function upwardImports(source: string, file: string): string[] {
  const own = layerOf(file);
  if (!own) throw new Error(`${relative(root, file)} has no layer`);
  return importsIn(source, file).flatMap((target) => {
    const layer = layerOf(target);
    return layer && layer.rank >= own.rank ? [] : [`${moduleKey(target)} (${layer?.name ?? "no layer"})`];
  });
}

describe("the Worker's layers: routes → middleware → lib → services → domain, with no arrow back", () => {
  it("every module of worker/, domain/ and drizzle/schema/ has a layer", async () => {
    const modules = await scannedModules();
    expect(modules.length).toBeGreaterThan(100);
    expect(modules.filter((file) => !layerOf(file)).map((file) => relative(root, file))).toEqual([]);
  });

  it.each(LAYERS)("no module of $name imports from a layer above it", async ({ name }) => {
    const files = (await scannedModules()).filter((file) => layerOf(file)?.name === name);
    const scanned = await Promise.all(files.map(async (file) => ({ file, source: await readFile(file, "utf8") })));
    // The scan sees the layer's own imports, so an empty result means nothing was read.
    expect(scanned.flatMap(({ file, source }) => importsIn(source, file)).length).toBeGreaterThan(0);
    const upward = scanned.flatMap(({ file, source }) =>
      upwardImports(source, file).map((target) => `${relative(root, file)} → ${target}`),
    );
    expect(upward).toEqual([]);
  });

  it("the scan sees every form of import into a layer above, and only those", () => {
    const source = [
      'import type { PresentedJob } from "../routes/jobs/present";',
      'export { requireCaller } from "../middleware/auth";',
      'export * from "../dashboard/pages/jobs";',
      'const app = await import("../app");',
      'type Document = ReturnType<typeof import("../openapi/document").openApiDocument>;',
      'import "../../dev/local-cloud";',
      'import { ApiError } from "../errors";',
      'import { claimUnit } from "./quota";',
      'import type { ValidationBody } from "../openapi/errors";',
      'import type { SignedIn } from "../dashboard/auth/session";',
      'import type { Database } from "../services/db";',
      'import { jobs } from "../../drizzle/schema";',
      'import { and } from "drizzle-orm";',
    ].join("\n");
    expect(upwardImports(source, join(root, "worker/lib/example.ts"))).toEqual([
      "worker/routes/jobs/present (routes)",
      "worker/middleware/auth (middleware)",
      "worker/dashboard/pages/jobs (routes)",
      "worker/app (top)",
      "worker/openapi/document (routes)",
      "dev/local-cloud (no layer)",
    ]);
  });
});
