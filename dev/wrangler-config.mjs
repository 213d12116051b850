import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { parse } from "smol-toml";

/**
 * wrangler.toml, parsed here rather than through wrangler's API, which would load all of
 * wrangler a second time.
 */
export async function readWranglerConfig(root) {
  return parse(await readFile(join(root, "wrangler.toml"), "utf8"));
}

/** The runtime every local workerd takes from wrangler.toml, as a deploy would: Miniflare's options. */
export function runtimeOptions(config) {
  return { compatibilityDate: config.compatibility_date, compatibilityFlags: config.compatibility_flags ?? [] };
}
