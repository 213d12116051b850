const DEFAULT_PORT = 8787;

/**
 * The API's port from PORT: unset or empty, the default; otherwise a whole number from 1 to
 * 65535. Checked at once: Miniflare refuses "abc" only once everything else has started, and
 * takes "" as 0, a port of the kernel's choosing that nothing then looks for.
 */
export function parsePort(value: string | undefined): number {
  const given = value?.trim() ?? "";
  if (given === "") return DEFAULT_PORT;
  const port = Number(given);
  if (!/^\d+$/.test(given) || port < 1 || port > 65535) {
    throw new Error(
      `PORT must be a whole number from 1 to 65535 (unset or empty for ${DEFAULT_PORT}); it was "${value}".`,
    );
  }
  return port;
}
