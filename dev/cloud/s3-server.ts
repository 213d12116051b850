import { mkdir } from "node:fs/promises";
// @ts-expect-error s3rver ships no types
import S3rver from "@20minutes/s3rver";

/** An S3 server that checks SigV4 (headers and presigned queries), as R2 does. */
export async function startS3Server(opts: { host: string; directory: string; bucket: string }) {
  await mkdir(opts.directory, { recursive: true });
  const server = new S3rver({
    address: opts.host,
    port: 0,
    silent: true,
    directory: opts.directory,
    configureBuckets: [{ name: opts.bucket }],
  });
  const { port } = (await server.run()) as { port: number };
  return {
    endpoint: `http://${opts.host}:${port}`,
    // s3rver's one built-in credential pair.
    accessKeyId: "S3RVER",
    secretAccessKey: "S3RVER",
    stop: () => server.close() as Promise<void>,
  };
}
