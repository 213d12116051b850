import { bodyLimit } from "hono/body-limit";
import type { MiddlewareHandler } from "hono";
import { HTTPException } from "hono/http-exception";
import { ApiError } from "../errors";
import { jsonResponse } from "../openapi/common";
import { PayloadTooLargeError } from "../openapi/errors";

const MiB = 1024 * 1024;

/**
 * The most bytes a request body may have, by what it carries. A job is a URL and caller
 * metadata. The largest timeline the Enterprise plan allows (1,000 clips, 500 distinct assets)
 * with every field set and 1,500-character signed URLs is about 3 MiB. The encoder's calls are
 * small JSON objects, and so is an upload's description (a filename, a media type, a size).
 */
export const BODY_LIMITS = { job: 1 * MiB, timeline: 4 * MiB, internal: 64 * 1024, upload: 16 * 1024 } as const;

function describeSize(bytes: number): string {
  return bytes >= MiB ? `${bytes / MiB} MiB` : `${bytes / 1024} KiB`;
}

/** The 413 body for a route whose limit is `maxSize` bytes. */
function payloadTooLarge(maxSize: number): ApiError {
  return ApiError.payloadTooLarge(
    `The request body is larger than the ${describeSize(maxSize)} this endpoint accepts.`,
  );
}

/** The 413 of an operation whose body may have at most `maxSize` bytes. */
export function bodyLimitError(maxSize: number) {
  return {
    413: jsonResponse(`The body is over ${describeSize(maxSize)}.`, PayloadTooLargeError, {
      tooLarge: { summary: "A body over the limit", value: payloadTooLarge(maxSize).body },
    }),
  };
}

/**
 * 413 before the body is read whole: a Content-Length over the limit is refused at once, and a
 * body without one (chunked) is read only until it passes the limit.
 */
export function limitBody(maxSize: number) {
  const limit = bodyLimit({
    maxSize,
    onError: () => {
      throw payloadTooLarge(maxSize);
    },
  });
  return refusingUnreadableBodies(limit, () => ApiError.invalidJson("The request body could not be read"));
}

/**
 * `limit` (hono's bodyLimit), with a body it cannot read refused as `unreadable()`: it reads a
 * chunked body without catching, so a broken chunk size or a client gone mid-body would be a 500.
 * What the handlers after it throw passes through untouched.
 */
export function refusingUnreadableBodies(limit: MiddlewareHandler, unreadable: () => Error): MiddlewareHandler {
  return async (c, next) => {
    let read = false;
    try {
      return await limit(c, () => {
        read = true;
        return next();
      });
    } catch (err) {
      // The limit's own 413 (an ApiError here, an HTTPException in the dashboard) stands.
      if (read || err instanceof ApiError || err instanceof HTTPException) throw err;
      throw unreadable();
    }
  };
}
