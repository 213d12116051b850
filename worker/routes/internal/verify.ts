import { createMiddleware } from "hono/factory";
import { INTERNAL_SIGNATURE_HEADER, INTERNAL_TIMESTAMP_HEADER, verifyInternal } from "../../../domain/internal-auth";
import type { AppEnv } from "../../context";
import { ApiError } from "../../errors";

/** Only the encoder, holding INTERNAL_SECRET, may call /internal; checked on the raw body. */
export const verifyEncoder = createMiddleware<AppEnv>(async (c, next) => {
  const body = await c.req.text();
  const ok = await verifyInternal(
    c.get("services").env.INTERNAL_SECRET,
    body,
    c.req.header(INTERNAL_TIMESTAMP_HEADER),
    c.req.header(INTERNAL_SIGNATURE_HEADER),
  );
  if (!ok) throw ApiError.unauthorized("Invalid internal signature");
  await next();
});
