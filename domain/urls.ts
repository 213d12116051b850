/**
 * An absolute http(s) URL with a host: the only kind of source the service fetches. Raw spaces
 * and control characters are refused rather than silently percent-encoded by the URL parser:
 * the string is stored and echoed as sent, so it must already be a well-formed URL.
 */
export function isAbsoluteHttpUrl(value: unknown): value is string {
  if (typeof value !== "string" || /[\u0000-\u0020\u007f]/.test(value)) return false;
  try {
    const url = new URL(value);
    return (url.protocol === "http:" || url.protocol === "https:") && url.hostname.length > 0;
  } catch {
    return false;
  }
}
