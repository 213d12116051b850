import type { ErrorKind } from "../client";

/** Exit codes, one per error class (docs/client-and-cli.md). */
export const EXIT = {
  ok: 0,
  unexpected: 1,
  usage: 2,
  badRequest: 3,
  unauthorized: 4,
  forbidden: 5,
  notFound: 6,
  gone: 7,
  quotaExceeded: 8,
  conflict: 9,
  unavailable: 10,
  jobFailed: 11,
  jobCancelled: 12,
  downloadFailed: 13,
  unexpectedResponse: 14,
  uploadFailed: 15,
  interrupted: 130,
} as const;

export const EXIT_BY_KIND: Record<ErrorKind, number> = {
  "bad-request": EXIT.badRequest,
  unauthorized: EXIT.unauthorized,
  forbidden: EXIT.forbidden,
  "not-found": EXIT.notFound,
  gone: EXIT.gone,
  // Refused as sent, like a 400: the same remedy (change the request), so the same code.
  "payload-too-large": EXIT.badRequest,
  "quota-exceeded": EXIT.quotaExceeded,
  conflict: EXIT.conflict,
  server: EXIT.unavailable,
  network: EXIT.unavailable,
  download: EXIT.downloadFailed,
  "unexpected-response": EXIT.unexpectedResponse,
  upload: EXIT.uploadFailed,
};

/** How the one-line message names each class. */
export const LABEL_BY_KIND: Record<ErrorKind, string> = {
  "bad-request": "refused",
  unauthorized: "unauthorized",
  forbidden: "not in your plan",
  "not-found": "not found",
  gone: "gone",
  "payload-too-large": "refused, too large",
  "quota-exceeded": "quota used up",
  conflict: "conflict",
  server: "service error (retry with backoff)",
  network: "service unreachable (retry with backoff)",
  download: "download refused by the storage",
  "unexpected-response": "not the API's answer",
  upload: "upload refused by the storage",
};

/** A failure the CLI itself found: bad arguments, an unreadable file, a job that did not complete. */
export class CliFailure extends Error {
  constructor(
    readonly exitCode: number,
    message: string,
  ) {
    super(message);
  }
}
