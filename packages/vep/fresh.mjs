import { readFile, stat } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

export const ROOT = fileURLToPath(new URL("../..", import.meta.url));
export const CLI_BUILD = fileURLToPath(new URL("dist/vep.mjs", import.meta.url));
/** The files the CLI's build was made from, for the checkout's launcher alone: not shipped. */
export const CLI_INPUTS = join(ROOT, "node_modules/.cache/vep-cli/inputs.json");
/**
 * Stands for the packages' files in the list: npm unpacks them with one old mtime, and their
 * ctime moves whenever a hard link to them is made; npm writes this file at every install.
 */
export const INSTALLED_PACKAGES = "node_modules/.package-lock.json";

/** What the list holds of esbuild's inputs (paths from ROOT): the project's own, and INSTALLED_PACKAGES. */
export function listedInputs(esbuildInputs) {
  return [...esbuildInputs.filter((input) => !input.split("/").includes("node_modules")), INSTALLED_PACKAGES];
}

/** Whether `build` must be made again: missing, without its list of inputs, or older than one of them. */
export async function isStale(build = CLI_BUILD, inputsFile = CLI_INPUTS, root = ROOT) {
  let builtAt;
  let inputs;
  try {
    builtAt = (await stat(build)).mtimeMs;
    inputs = JSON.parse(await readFile(inputsFile, "utf8"));
  } catch {
    return true;
  }
  const changed = await Promise.all(
    inputs.map((input) =>
      stat(join(root, input)).then(
        (s) => s.mtimeMs > builtAt,
        () => true,
      ),
    ),
  );
  return changed.includes(true);
}
