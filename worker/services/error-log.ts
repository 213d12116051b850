/**
 * What the Worker's log lines say of an error: below every layer that logs (services log a
 * failure they route around; lib and the routes theirs), and never a value a client sent.
 */

/** Fields of the Postgres driver's errors worth a log line (drizzle's "Failed query" wraps one as its cause). */
const DRIVER_FIELDS = ["code", "detail", "hint", "severity", "table", "column", "constraint", "routine"] as const;

/**
 * An error's message as the log may keep it. drizzle's "Failed query" message ends with the
 * statement's parameters, and Upstash's errors with the whole command: a webhook secret being
 * saved, a password hash, an email in a throttle's key, a client's presigned source URL. The
 * statement and the command's name stay; the values are withheld.
 */
function loggableMessage(err: Error): string {
  const { query, params } = err as { query?: unknown; params?: unknown };
  if (typeof query === "string" && Array.isArray(params))
    return `Failed query: ${query}\nparams: ${params.length} withheld`;
  return err.message.replace(/, command was: \[\[?"(\w+)"[\s\S]*$/, ", command was: $1 (its arguments withheld)");
}

/**
 * An error for the log: its stack, and down its chain of causes each one's name, message and
 * whatever of the driver's fields it carries, so the log says why a query failed. Values a
 * client sent or a secret are not written (loggableMessage).
 */
export function describeError(err: unknown, depth = 0): Record<string, unknown> {
  if (!(err instanceof Error)) return { message: String(err) };
  const message = loggableMessage(err);
  const described: Record<string, unknown> = { name: err.name, message };
  for (const key of DRIVER_FIELDS) {
    const value = (err as unknown as Record<string, unknown>)[key];
    if (value !== undefined && value !== null && value !== "") described[key] = value;
  }
  // The stack begins with the message.
  if (depth === 0) described.stack = err.stack?.replace(err.message, message);
  if (err.cause !== undefined && depth < MAX_CAUSES) described.cause = describeError(err.cause, depth + 1);
  return described;
}

const MAX_CAUSES = 5;
