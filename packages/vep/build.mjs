/**
 * Builds the vep package (package.json beside this file): the CLI and the client, each bundled with
 * its dependencies by esbuild, so the package has none to install; the client's types in one file;
 * the bundled packages' licences. `npm run build:cli` and npm pack's prepack run it; the checkout's
 * bin/vep.mjs runs buildCli alone, when the CLI's build is stale.
 */
import { mkdir, readdir, readFile, rename, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";
import { CLI_BUILD, CLI_INPUTS, listedInputs, ROOT } from "./fresh.mjs";

const PACKAGE = fileURLToPath(new URL(".", import.meta.url));
const DIST = join(PACKAGE, "dist");

const BUNDLE = {
  absWorkingDir: ROOT,
  bundle: true,
  format: "esm",
  target: "node20",
  write: false,
  metafile: true,
  logLevel: "warning",
};

/** Written beside, then renamed over: a vep started meanwhile (the tests start several at once) reads a whole file. */
async function writeWhole(path, contents, mode = 0o644) {
  await mkdir(dirname(path), { recursive: true });
  const temporary = `${path}.${process.pid}.tmp`;
  await writeFile(temporary, contents, { mode });
  await rename(temporary, path);
}

/** dist/vep.mjs, and the list of what it was built from (fresh.mjs), written first so that the build is never newer than its list. */
export async function buildCli() {
  const { outputFiles, metafile } = await build({
    ...BUNDLE,
    entryPoints: ["cli/run.ts"],
    outfile: CLI_BUILD,
    platform: "node",
    // commander and cli-progress are CommonJS and require Node's modules: an ES module has no require of its own.
    banner: {
      js: 'import { createRequire as vepCreateRequire } from "node:module";\nconst require = vepCreateRequire(import.meta.url);',
    },
  });
  await writeWhole(CLI_INPUTS, JSON.stringify(listedInputs(Object.keys(metafile.inputs))));
  await writeWhole(CLI_BUILD, outputFiles[0].contents, 0o755);
  return metafile;
}

async function buildClient() {
  const { outputFiles, metafile } = await build({
    ...BUNDLE,
    entryPoints: ["client/index.ts"],
    outfile: join(DIST, "index.mjs"),
    // Neutral: a Node module imported by the client fails the build, so the client stays usable beyond Node.
    platform: "neutral",
    mainFields: ["module", "main"],
  });
  await writeWhole(join(DIST, "index.mjs"), outputFiles[0].contents);
  return metafile;
}

/**
 * One declaration file: tsc would emit one per source, whose extensionless imports a project
 * resolving as Node does (moduleResolution node16/nodenext) cannot follow. standardwebhooks'
 * error class is inlined, since its package is not installed beside this one.
 */
async function buildTypes() {
  // Loaded here: it loads TypeScript, which the CLI's rebuild does not need.
  const { generateDtsBundle } = await import("dts-bundle-generator");
  const [types] = generateDtsBundle(
    [
      {
        filePath: join(ROOT, "client/index.ts"),
        libraries: { inlinedLibraries: ["standardwebhooks"] },
        output: { exportReferencedTypes: false },
      },
    ],
    { preferredConfigPath: join(PACKAGE, "tsconfig.json") },
  );
  await writeWhole(join(DIST, "index.d.ts"), types);
}

/** Each bundled package's licence text, which their terms (MIT and the like) ask to ship with their code. */
async function writeLicences(metafiles) {
  const packageDirs = new Set();
  for (const { inputs } of metafiles)
    for (const input of Object.keys(inputs)) {
      const dir = /^(.*node_modules\/(?:@[^/]+\/)?[^/]+)\//.exec(input)?.[1];
      if (dir) packageDirs.add(dir);
    }
  const sections = [];
  for (const dir of [...packageDirs].sort()) {
    const manifest = JSON.parse(await readFile(join(ROOT, dir, "package.json"), "utf8"));
    const licenceFile = (await readdir(join(ROOT, dir))).find((name) => /^(licen[cs]e|copying)/i.test(name));
    const text = licenceFile ? await readFile(join(ROOT, dir, licenceFile), "utf8") : `License: ${manifest.license}`;
    sections.push(`## ${manifest.name} ${manifest.version}\n\n${text.trim()}\n`);
  }
  await writeWhole(join(DIST, "THIRD-PARTY-LICENSES.md"), `# Packages bundled into vep\n\n${sections.join("\n")}`);
}

export async function buildPackage() {
  const metafiles = await Promise.all([buildCli(), buildClient()]);
  await Promise.all([buildTypes(), writeLicences(metafiles)]);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await buildPackage();
