import { randomBytes } from "node:crypto";
import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable } from "node:stream";
import { AwsClient } from "aws4fetch";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startS3Server } from "../../dev/cloud/s3-server";
import { createUploader, PART_SIZE } from "../../encoder/upload/s3";

describe("encoder uploads to the S3 API (aws4fetch)", () => {
  let s3: Awaited<ReturnType<typeof startS3Server>>;
  let read: (key: string) => Promise<Buffer>;
  beforeAll(async () => {
    s3 = await startS3Server({ host: "127.0.0.1", directory: await mkdtemp(join(tmpdir(), "s3-up-")), bucket: "outputs" });
    const client = new AwsClient({ accessKeyId: s3.accessKeyId, secretAccessKey: s3.secretAccessKey, service: "s3", region: "auto" });
    read = async (key) => Buffer.from(await (await client.fetch(`${s3.endpoint}/outputs/${key}`)).arrayBuffer());
  });
  afterAll(() => s3.stop());

  const uploader = () => createUploader({ endpoint: s3.endpoint, region: "auto", bucket: "outputs", accessKeyId: s3.accessKeyId, secretAccessKey: s3.secretAccessKey });

  it("a small file goes up in one PUT, byte for byte", async () => {
    const data = randomBytes(1024 * 1024);
    const path = join(await mkdtemp(join(tmpdir(), "up-")), "small.bin");
    await writeFile(path, data);
    expect(await uploader().uploadFile("a/small.bin", path, "video/mp4")).toBe(data.length);
    expect((await read("a/small.bin")).equals(data)).toBe(true);
  });

  it("a stream larger than several parts goes up as a multipart upload, in order", async () => {
    const data = randomBytes(PART_SIZE * 3 + 12345);
    // Small chunks, as a ZIP stream produces them.
    const chunks = Array.from({ length: Math.ceil(data.length / 65536) }, (_, i) => data.subarray(i * 65536, (i + 1) * 65536));
    expect(await uploader().uploadStream("a/big.zip", Readable.from(chunks), "application/zip")).toBe(data.length);
    expect((await read("a/big.zip")).equals(data)).toBe(true);
  });

  it("a refused upload fails with a retryable upload failure", async () => {
    const wrong = createUploader({ endpoint: s3.endpoint, region: "auto", bucket: "outputs", accessKeyId: s3.accessKeyId, secretAccessKey: "wrong" });
    const err = await wrong.uploadStream("a/x.bin", Readable.from([randomBytes(PART_SIZE + 10)]), "application/zip").catch((e) => e);
    expect(err).toMatchObject({ kind: "upload", retryable: true });
    expect(err.message).toMatch(/^Upload failed/);
  });
});
