#!/usr/bin/env node
// In the checkout vep runs its build, as the package does (packages/vep), made again first when a
// file it was built from has changed: the sources stay live, and no run goes through tsx.
import { existsSync } from "node:fs";
import { pathToFileURL } from "node:url";
import { CLI_BUILD, isStale } from "../packages/vep/fresh.mjs";

/** Whether there is a build to run, after making it again if it is stale and esbuild is there to make it. */
async function ready() {
  if (!(await isStale())) return true;
  try {
    import.meta.resolve("esbuild");
  } catch {
    // Installed with --omit=dev: the build there is what there is.
    return existsSync(CLI_BUILD);
  }
  const { buildCli } = await import("../packages/vep/build.mjs");
  await buildCli();
  return true;
}

if (await ready()) await import(pathToFileURL(CLI_BUILD).href);
else {
  process.stderr.write("vep: not built, and esbuild (a devDependency) is not installed to build it: npm install\n");
  process.exitCode = 1;
}
