import { mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { bundleOf } from "../../../dev/worker-bundle-cache.mjs";

/**
 * The Worker bundles npm run dev keeps between starts: found again only while every file they
 * were built from is unchanged. A project of a few files stands in; its "build" writes what
 * wrangler writes (index.js and a source map naming the sources), numbered by how many ran.
 */
let root: string;
let builds: number;
let duringBuild: (() => Promise<void>) | undefined;

beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), "bundle-cache-"));
  await mkdir(join(root, "worker", "routes"), { recursive: true });
  await mkdir(join(root, "domain"));
  await mkdir(join(root, "docs"));
  await writeFile(join(root, "worker", "index.ts"), "export default {}");
  await writeFile(join(root, "worker", "routes", "jobs.ts"), "export const jobs = 1");
  await writeFile(join(root, "domain", "plans.ts"), "export const plans = []");
  await writeFile(join(root, "docs", "api.md"), "# API");
  await writeFile(join(root, "wrangler.toml"), 'main = "worker/index.ts"');
  await writeFile(join(root, "package-lock.json"), "{}");
  builds = 0;
  duringBuild = undefined;
});
afterEach(() => rm(root, { recursive: true, force: true }));

const temporaryDirs: string[] = [];
const start = () =>
  bundleOf(
    root,
    async () => {
      const dir = await mkdtemp(join(tmpdir(), "bundle-cache-build-"));
      temporaryDirs.push(dir);
      return dir;
    },
    async (dir) => {
      builds++;
      await duringBuild?.();
      const sources = ["worker/index.ts", "worker/routes/jobs.ts", "domain/plans.ts", "node_modules/hono/index.js"];
      await writeFile(join(dir, "index.js"), `// build ${builds}`);
      await writeFile(
        join(dir, "index.js.map"),
        JSON.stringify({ version: 3, sourceRoot: dir, sources: sources.map((s) => join(root, s)) }),
      );
    },
  );
const served = async (dir: string) => readFile(join(dir, "index.js"), "utf8");

afterEach(async () => {
  await Promise.all(temporaryDirs.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
});

describe("the Worker's bundle, kept between starts", () => {
  it("is built once for the same files, and served from the cache after that, outside the temporary directory", async () => {
    const first = await start();
    expect(first.temporary).toBe(true);
    const second = await start();
    expect(second).toEqual({
      dir: expect.stringContaining(join(root, "node_modules", ".cache", "vep-worker")),
      temporary: false,
    });
    expect(await served(second.dir)).toBe("// build 1");
    expect(builds).toBe(1);
  });

  it("is built again after a change to a source, a new file beside them, wrangler.toml or the installed packages, but not to a file outside the bundle's directories", async () => {
    await start();
    const changes: [string, string][] = [
      ["worker/routes/jobs.ts", "export const jobs = 2"],
      ["domain/new.ts", "export const added = true"],
      ["wrangler.toml", 'main = "worker/index.ts"\ncompatibility_date = "2026-01-01"'],
      ["package-lock.json", '{"lockfileVersion":3}'],
    ];
    for (const [file, content] of changes) {
      const before = builds;
      await writeFile(join(root, file), content);
      expect(await served((await start()).dir), file).toBe(`// build ${before + 1}`);
      expect((await start()).temporary, file).toBe(false);
    }
    await writeFile(join(root, "docs", "api.md"), "# API, changed");
    expect((await start()).temporary).toBe(false);
  });

  it("is not kept when a source changed while it was built: the next start builds it again", async () => {
    duringBuild = async () => {
      // The file system's clock, which stamps the change, can lag Date.now() by a tick: written
      // again until its stamp is past the moment the build began.
      const building = Date.now();
      const source = join(root, "worker", "index.ts");
      await vi.waitFor(
        async () => {
          await writeFile(source, "export default { changed: true }");
          expect((await stat(source)).mtimeMs).toBeGreaterThan(building);
        },
        { timeout: 10_000, interval: 1 },
      );
    };
    await start();
    duringBuild = undefined;
    expect((await start()).temporary).toBe(true);
    expect(builds).toBe(2);
    expect((await start()).temporary).toBe(false);
  });

  it("two starts that build the same bundle at once keep one copy, and leave no draft", async () => {
    await Promise.all([start(), start()]);
    expect(builds).toBe(2);
    expect((await start()).temporary).toBe(false);
    const entries = await readdir(join(root, "node_modules", ".cache", "vep-worker"));
    expect(entries.filter((name) => name !== "trees.json")).toHaveLength(1);
  });

  it("keeps the four bundles used last", async () => {
    for (let i = 0; i < 6; i++) {
      await writeFile(join(root, "domain", "plans.ts"), `export const plans = [${i}]`);
      await start();
    }
    const kept = (await readdir(join(root, "node_modules", ".cache", "vep-worker"))).filter(
      (name) => name !== "trees.json",
    );
    expect(kept).toHaveLength(4);
    await writeFile(join(root, "domain", "plans.ts"), "export const plans = [5]");
    expect((await start()).temporary).toBe(false);
  });
});
