import { readFileSync } from "node:fs";
import picomatch from "picomatch";
import { parse } from "smol-toml";
import type { Plugin } from "vitest/config";

interface ModuleRule {
  type: string;
  globs: string[];
}

/**
 * Outside workerd, modules that wrangler.toml's `Text` rules bundle as strings (the dashboard's
 * assets, Scalar's script) would be run as JavaScript or CSS. This gives Node-side test projects
 * the same import semantics, from the same rules, so the app can be built there too.
 */
export function wranglerTextModules(configPath: string): Plugin {
  const config = parse(readFileSync(configPath, "utf8")) as { rules?: ModuleRule[] };
  const globs = (config.rules ?? []).filter((r) => r.type === "Text").flatMap((r) => r.globs);
  const isText = picomatch(globs, { dot: true });
  return {
    name: "wrangler-text-modules",
    enforce: "pre",
    // Vite's own `?raw` import gives the text, for stylesheets too.
    async resolveId(source, importer, options) {
      const resolved = await this.resolve(source, importer, { ...options, skipSelf: true });
      return resolved && isText(resolved.id) ? `${resolved.id}?raw` : null;
    },
  };
}
