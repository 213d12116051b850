import { createHash, randomBytes } from "node:crypto";
import { cp, mkdir, readdir, readFile, rename, rm, stat, utimes, writeFile } from "node:fs/promises";
import { join, relative, resolve, sep } from "node:path";

/**
 * Worker bundles kept between starts, by what they were built from: building one (`wrangler
 * deploy --dry-run`) is part of every start of `npm run dev` and of every test stack
 * (docs/getting-started.md#how-the-worker-is-served), and the sources rarely change between two.
 * Under node_modules/.cache, where build tools keep theirs (a fresh `npm ci` clears it).
 */
const CACHE = join("node_modules", ".cache", "vep-worker");
/** The project's directories the last kept bundle was built from (worker/, domain/…). */
const TREES_FILE = "trees.json";
/** Besides those directories, what a build depends on: wrangler's configuration and the packages installed. */
const ALWAYS = ["wrangler.toml", "package-lock.json", join("node_modules", ".package-lock.json")];
/** Bundles kept: the newest few, so that switching branches back and forth finds its own. */
const KEPT = 4;

/**
 * A bundle of the Worker as the project's files are now: one kept from a start that saw the same
 * files, or one `build(dir)` makes in a new temporary directory (`temporary`: the caller removes
 * it), which is then kept for the next start.
 */
export async function bundleOf(root, newTemporaryDir, build) {
  const cache = join(root, CACHE);
  const trees = await readFile(join(cache, TREES_FILE), "utf8").then(JSON.parse, () => undefined);
  if (trees) {
    const kept = join(cache, (await fingerprint(root, trees)).hash);
    if (
      await stat(join(kept, "index.js")).then(
        () => true,
        () => false,
      )
    ) {
      const now = new Date();
      await utimes(kept, now, now).catch(() => undefined);
      return { dir: kept, temporary: false };
    }
  }
  const dir = await newTemporaryDir();
  const started = Date.now();
  await build(dir);
  await keep(root, cache, dir, started).catch((err) =>
    console.error(`the Worker's bundle was not kept for the next start: ${err.message}`),
  );
  return { dir, temporary: true };
}

/**
 * Copies a new bundle into the cache under the fingerprint of its sources, unless one of them
 * changed while it was built (the bundle may hold the file before the change, and would be found
 * under the fingerprint of the file after it).
 */
async function keep(root, cache, dir, started) {
  const trees = await projectTrees(root, dir);
  const { hash, newest } = await fingerprint(root, trees);
  if (newest >= started) return;
  await mkdir(cache, { recursive: true });
  const draft = join(cache, `.draft-${randomBytes(6).toString("hex")}`);
  await cp(dir, draft, { recursive: true });
  // Another start may have kept the same bundle meanwhile: its copy stays (a start may be reading
  // it), and the rename, which does not replace a directory holding files, leaves ours to go.
  const kept = await rename(draft, join(cache, hash)).then(
    () => true,
    () => false,
  );
  if (!kept) await rm(draft, { recursive: true, force: true });
  const treesDraft = `${draft}.trees`;
  await writeFile(treesDraft, JSON.stringify(trees));
  await rename(treesDraft, join(cache, TREES_FILE));
  await prune(cache);
}

/** The project's files a bundle was built from, as its source map names them: the packages' left out. */
export async function bundleSources(dir) {
  const map = JSON.parse(await readFile(join(dir, "index.js.map"), "utf8"));
  return map.sources
    .map((source) => resolve(dir, map.sourceRoot ?? "", source))
    .filter((path) => !path.split(sep).includes("node_modules"));
}

/** The top-level directories of the project that hold the bundle's sources. */
async function projectTrees(root, dir) {
  const tops = (await bundleSources(dir))
    .map((source) => relative(root, source).split(sep)[0])
    .filter((top) => top && top !== "..");
  return [...new Set(tops)].sort();
}

/**
 * A hash of the project root, `ALWAYS` and every file under `trees` (names and contents), and the
 * newest modification time among them.
 */
async function fingerprint(root, trees) {
  const hash = createHash("sha256").update(root);
  let newest = 0;
  const files = [...ALWAYS, ...(await Promise.all(trees.map((tree) => filesUnder(root, tree)))).flat()];
  for (const file of files) {
    const path = join(root, file);
    const [content, info] = await Promise.all([
      readFile(path).catch(() => Buffer.alloc(0)),
      stat(path).catch(() => undefined),
    ]);
    hash.update(`\0${file}\0${content.length}\0`).update(content);
    newest = Math.max(newest, info?.mtimeMs ?? 0);
  }
  return { hash: hash.digest("hex").slice(0, 32), newest };
}

async function filesUnder(root, tree) {
  const entries = await readdir(join(root, tree), { recursive: true, withFileTypes: true }).catch(() => []);
  return entries
    .filter((entry) => entry.isFile())
    .map((entry) => relative(root, join(entry.parentPath ?? entry.path, entry.name)))
    .sort();
}

/** Leaves the `KEPT` bundles used last, and no draft a killed start left. */
async function prune(cache) {
  const names = (await readdir(cache)).filter((name) => name !== TREES_FILE);
  const entries = await Promise.all(
    names.map(async (name) => ({ name, used: (await stat(join(cache, name)).catch(() => undefined))?.mtimeMs ?? 0 })),
  );
  const hour = Date.now() - 3600_000;
  const bundles = entries.filter((e) => !e.name.startsWith(".draft-")).sort((a, b) => b.used - a.used);
  const stale = [...bundles.slice(KEPT), ...entries.filter((e) => e.name.startsWith(".draft-") && e.used < hour)];
  await Promise.all(stale.map((e) => rm(join(cache, e.name), { recursive: true, force: true })));
}
