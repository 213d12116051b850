/**
 * workerd's TransformStream of a declared length: a fetch whose body is its readable side sends
 * that Content-Length, where any other stream goes chunked; more or fewer bytes error it.
 * (Cloudflare's docs: Runtime APIs › Streams › TransformStream › FixedLengthStream.)
 */
declare class FixedLengthStream extends TransformStream<Uint8Array, Uint8Array> {
  constructor(expectedLength: number | bigint);
}
