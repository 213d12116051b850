import { mkdir, rm } from "node:fs/promises";
import { createServer, request } from "node:http";
import { join } from "node:path";
// @ts-expect-error s3rver ships no types
import S3rver from "@20minutes/s3rver";
import { close, guarded, listen } from "./listen";

const ACCESS_DENIED = `<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>AccessDenied</Code><Message>Access Denied</Message></Error>`;

const MIN_PART_BYTES = 5 * 1024 * 1024;

const NO_SUCH_UPLOAD = `<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>NoSuchUpload</Code><Message>The specified multipart upload does not exist.</Message></Error>`;

/** A ListParts answer, every part on one page (the service's uploads have at most 640). */
function listPartsXml(sizes: Map<number, number>, etags: Map<number, string> | undefined): string {
  const parts = [...sizes]
    .sort(([a], [b]) => a - b)
    .map(
      ([number, size]) =>
        `<Part><PartNumber>${number}</PartNumber><ETag>${etags?.get(number) ?? ""}</ETag><Size>${size}</Size></Part>`,
    )
    .join("");
  return `<?xml version="1.0" encoding="UTF-8"?>\n<ListPartsResult><IsTruncated>false</IsTruncated>${parts}</ListPartsResult>`;
}

/**
 * What R2 refuses in a multipart upload's parts, by their sizes in order, and s3rver does not:
 * "Object part sizes must be at least 5MiB … All parts except the last one must be the same
 * size. The last part has no minimum size, but must be the same or smaller than the other parts."
 * (developers.cloudflare.com/r2/objects/multipart-objects). Null when R2 would assemble them.
 */
export function multipartRefusal(sizes: number[]): { code: string; message: string } | null {
  if (sizes.length < 2) return null;
  const [first] = sizes;
  if (sizes.slice(0, -1).some((size) => size !== first) || sizes[sizes.length - 1] > first) {
    return { code: "InvalidPart", message: "All non-trailing parts must have the same length." };
  }
  if (first < MIN_PART_BYTES)
    return { code: "EntityTooSmall", message: "Your proposed upload is smaller than the minimum allowed object size." };
  return null;
}

/**
 * An S3 server that checks SigV4 (headers and presigned queries), behaving like a private R2
 * bucket. s3rver serves anonymous requests, so a thin front refuses any request that carries
 * no signature at all before passing the rest through for s3rver to verify; it also refuses a
 * multipart completion whose part sizes R2 would refuse, and answers ListParts and
 * AbortMultipartUpload, which s3rver lacks, from the parts it saw stored.
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

  /** The size of each part uploaded, by upload id and part number, for the completion's check. */
  const partSizes = new Map<string, Map<number, number>>();
  /** Each stored part's ETag, by upload id and part number, for ListParts. */
  const partEtags = new Map<string, Map<number, string>>();

  const front = createServer(
    guarded("S3 front", (req, res) => {
      const signed = Boolean(req.headers.authorization) || /[?&]X-Amz-Signature=/.test(req.url ?? "");
      if (!signed) {
        res.writeHead(403, { "content-type": "application/xml" }).end(ACCESS_DENIED);
        return;
      }
      const query = new URLSearchParams((req.url ?? "").split("?")[1] ?? "");
      const uploadId = query.get("uploadId");
      const partNumber = Number(query.get("partNumber"));
      const forward = (body?: Buffer) => {
        let sent = 0;
        const upstream = request(
          { host: opts.host, port: innerPort, method: req.method, path: req.url, headers: req.headers },
          (answer) => {
            if (uploadId && partNumber && req.method === "PUT" && answer.statusCode === 200) {
              partSizes.set(uploadId, (partSizes.get(uploadId) ?? new Map<number, number>()).set(partNumber, sent));
              const etag = String(answer.headers.etag ?? "");
              partEtags.set(uploadId, (partEtags.get(uploadId) ?? new Map<number, string>()).set(partNumber, etag));
            }
            if (uploadId && req.method === "POST" && answer.statusCode === 200) {
              partSizes.delete(uploadId);
              partEtags.delete(uploadId);
            }
            // s3rver checked the signature, then found no ListParts: answered here from what it stored.
            if (uploadId && req.method === "GET" && answer.statusCode === 405) {
              answer.resume();
              const parts = partSizes.get(uploadId);
              if (!parts) {
                res.writeHead(404, { "content-type": "application/xml" }).end(NO_SUCH_UPLOAD);
                return;
              }
              res
                .writeHead(200, { "content-type": "application/xml" })
                .end(listPartsXml(parts, partEtags.get(uploadId)));
              return;
            }
            // s3rver checked the signature, then found no AbortMultipartUpload: the upload's parts
            // are deleted here, where s3rver's filesystem store keeps them.
            if (uploadId && req.method === "DELETE" && answer.statusCode === 405) {
              answer.resume();
              if (!partSizes.has(uploadId) || !/^[0-9a-f]+$/.test(uploadId)) {
                res.writeHead(404, { "content-type": "application/xml" }).end(NO_SUCH_UPLOAD);
                return;
              }
              partSizes.delete(uploadId);
              partEtags.delete(uploadId);
              rm(join(opts.directory, opts.bucket, "._S3rver_uploads", uploadId), {
                recursive: true,
                force: true,
              }).then(
                () => res.writeHead(204).end(),
                () => res.writeHead(500).end(),
              );
              return;
            }
            // A multipart upload begun: known from now on, with no parts yet, so ListParts finds it.
            if (query.has("uploads") && req.method === "POST" && answer.statusCode === 200) {
              const chunks: Buffer[] = [];
              answer.on("data", (chunk: Buffer) => chunks.push(chunk));
              answer.on("end", () => {
                const begun = /<UploadId>([^<]+)<\/UploadId>/.exec(Buffer.concat(chunks).toString("utf8"))?.[1];
                if (begun && !partSizes.has(begun)) partSizes.set(begun, new Map());
              });
            }
            res.writeHead(answer.statusCode ?? 502, answer.headers);
            answer.pipe(res);
          },
        );
        // Headers may be out already when the connection breaks mid-answer: then only the connection can say so.
        upstream.on("error", () => (res.headersSent ? res.destroy() : res.writeHead(502).end()));
        if (body) return upstream.end(body);
        req.on("data", (chunk: Buffer) => (sent += chunk.length));
        req.pipe(upstream);
      };
      if (!(uploadId && req.method === "POST")) return forward();
      // A multipart completion: judged on R2's rules before s3rver, which does not check them, assembles the object.
      const chunks: Buffer[] = [];
      req.on("data", (chunk: Buffer) => chunks.push(chunk));
      req.on("end", () => {
        const body = Buffer.concat(chunks);
        const listed = [...body.toString("utf8").matchAll(/<PartNumber>(\d+)<\/PartNumber>/g)].map((m) =>
          partSizes.get(uploadId)?.get(Number(m[1])),
        );
        const refusal = listed.every((size) => size !== undefined) ? multipartRefusal(listed) : null;
        if (!refusal) return forward(body);
        res
          .writeHead(400, { "content-type": "application/xml" })
          .end(
            `<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>${refusal.code}</Code><Message>${refusal.message}</Message></Error>`,
          );
      });
    }),
  );
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
