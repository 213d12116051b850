import { fileURLToPath } from "node:url";

const preload = fileURLToPath(new URL("./fake-dns-preload.mjs", import.meta.url));

/**
 * Environment for a Node process (e.g. the encoder, through `startE2E({ env })`) in which the
 * given hostnames resolve to the given addresses, as a hostile or misconfigured DNS would answer.
 * Use names under a reserved TLD (`.test`, RFC 2606) so nothing real can be shadowed.
 */
export function fakeDnsEnv(table: Record<string, string>): Record<string, string> {
  return {
    NODE_OPTIONS: [process.env.NODE_OPTIONS, `--import ${preload}`].filter(Boolean).join(" "),
    FAKE_DNS: Object.entries(table)
      .map(([name, address]) => `${name.toLowerCase()}=${address}`)
      .join(","),
  };
}
