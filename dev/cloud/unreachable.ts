/** How long a start waits for a service given by URL to answer; none answering would hang it for ever. */
export const CONNECT_TIMEOUT_MS = 10_000;

/** A service given by URL (DATABASE_URL, REDIS_URL) that did not answer at start. */
export class Unreachable extends Error {
  constructor(
    readonly service: "database" | "redis",
    url: string,
    cause: unknown,
  ) {
    const what = service === "database" ? "the database" : "Redis";
    super(
      `${what} at ${withoutPassword(url)} did not answer within ${CONNECT_TIMEOUT_MS / 1000} s: ${(cause as Error)?.message || String(cause)}`,
      { cause },
    );
  }
}

/** The URL as it may be printed. */
function withoutPassword(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = "***";
    return parsed.toString();
  } catch {
    return "(a URL that does not parse)";
  }
}
