/**
 * A path-style object URL (`endpoint/bucket/key`), so a local S3 server needs no DNS; each key
 * segment is encoded, the slashes kept. The Worker signs and the encoder uploads with it.
 */
export function s3ObjectUrl(endpoint: string, bucket: string, key: string): string {
  return `${endpoint.replace(/\/$/, "")}/${bucket}/${key.split("/").map(encodeURIComponent).join("/")}`;
}
