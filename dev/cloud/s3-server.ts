import { mkdir } from "node:fs/promises";
import { createServer, request } from "node:http";
// @ts-expect-error s3rver ships no types
import S3rver from "@20minutes/s3rver";
import { close, listen } from "./listen";

const ACCESS_DENIED = `<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>AccessDenied</Code><Message>Access Denied</Message></Error>`;

/**
 * An S3 server that checks SigV4 (headers and presigned queries), behaving like a private R2
 * bucket. s3rver serves anonymous requests, so a thin front refuses any request that carries
 * no signature at all before passing the rest through for s3rver to verify.
 */
export async function startS3Server(opts: { host: string; directory: string; bucket: string }) {
  await mkdir(opts.directory, { recursive: true });
  const s3rver = new S3rver({
    address: opts.host,
    port: 0,
    silent: true,
    directory: opts.directory,
    configureBuckets: [{ name: opts.bucket }],
  });
  const { port: innerPort } = (await s3rver.run()) as { port: number };

  const front = createServer((req, res) => {
    const signed = Boolean(req.headers.authorization) || /[?&]X-Amz-Signature=/.test(req.url ?? "");
    if (!signed) {
      res.writeHead(403, { "content-type": "application/xml" }).end(ACCESS_DENIED);
      return;
    }
    const upstream = request(
      { host: opts.host, port: innerPort, method: req.method, path: req.url, headers: req.headers },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    upstream.on("error", () => res.writeHead(502).end());
    req.pipe(upstream);
  });
  const port = await listen(front, opts.host);
  return {
    endpoint: `http://${opts.host}:${port}`,
    // s3rver's one built-in credential pair.
    accessKeyId: "S3RVER",
    secretAccessKey: "S3RVER",
    stop: async () => {
      await close(front);
      await s3rver.close();
    },
  };
}
