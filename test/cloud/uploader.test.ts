import { randomBytes } from "node:crypto";
import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable } from "node:stream";
import { AwsClient } from "aws4fetch";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { multipartRefusal, startS3Server } from "../../dev/cloud/s3-server";
import { createUploader, ONE_PUT_BYTES, PART_SIZE } from "../../encoder/upload/s3";
import { startStorageFront } from "../faults/support";

describe("encoder uploads to the S3 API (aws4fetch)", () => {
  let s3: Awaited<ReturnType<typeof startS3Server>>;
  let read: (key: string) => Promise<Buffer>;
  beforeAll(async () => {
    s3 = await startS3Server({
      host: "127.0.0.1",
      directory: await mkdtemp(join(tmpdir(), "s3-up-")),
      bucket: "outputs",
    });
    const client = new AwsClient({
      accessKeyId: s3.accessKeyId,
      secretAccessKey: s3.secretAccessKey,
      service: "s3",
      region: "auto",
    });
    read = async (key) => Buffer.from(await (await client.fetch(`${s3.endpoint}/outputs/${key}`)).arrayBuffer());
  });
  afterAll(() => s3.stop());

  const uploader = () =>
    createUploader({
      endpoint: s3.endpoint,
      region: "auto",
      bucket: "outputs",
      accessKeyId: s3.accessKeyId,
      secretAccessKey: s3.secretAccessKey,
    });

  it("a small file goes up in one PUT, byte for byte", async () => {
    const data = randomBytes(1024 * 1024);
    const path = join(await mkdtemp(join(tmpdir(), "up-")), "small.bin");
    await writeFile(path, data);
    expect(await uploader().uploadFile("a/small.bin", path, "video/mp4")).toBe(data.length);
    expect((await read("a/small.bin")).equals(data)).toBe(true);
  });

  it("a file stored in one PUT carries storage's tag, which a HEAD reads back until the object is replaced or deleted", async () => {
    const dir = await mkdtemp(join(tmpdir(), "up-"));
    await writeFile(join(dir, "one"), randomBytes(4096));
    await writeFile(join(dir, "two"), randomBytes(4096));
    const up = uploader();
    const first = await up.storeFile("a/tagged", join(dir, "one"), "application/octet-stream");
    expect(first.bytes).toBe(4096);
    expect(first.etag).toMatch(/\S/);
    expect(await up.objectTag("a/tagged")).toBe(first.etag);
    const second = await up.storeFile("a/tagged", join(dir, "two"), "application/octet-stream");
    expect(second.etag).not.toBe(first.etag);
    expect(await up.objectTag("a/tagged")).toBe(second.etag);
    await up.deleteObject("a/tagged");
    expect(await up.objectTag("a/tagged")).toBeUndefined();
  });

  it("a stream larger than several parts goes up as a multipart upload, in order, in parts of one size as R2 requires", async () => {
    const data = randomBytes(PART_SIZE * 3 + 12345);
    // Chunks of uneven sizes that do not add up to a part, as a ZIP stream's are (a member's header
    // is 30 bytes and more): parts of whatever was buffered would differ in size.
    const chunks: Buffer[] = [];
    for (let at = 0, i = 0; at < data.length; i++) {
      const size = 30 + ((i * 7919) % 200_000);
      chunks.push(data.subarray(at, at + size));
      at += size;
    }
    expect(await uploader().uploadStream("a/big.zip", Readable.from(chunks), "application/zip")).toBe(data.length);
    expect((await read("a/big.zip")).equals(data)).toBe(true);
  });

  it("the local S3 refuses a completion whose parts R2 would refuse: unequal, under 5 MiB, or a last one larger", () => {
    const MiB = 1024 * 1024;
    expect(multipartRefusal([16 * MiB, 16 * MiB, 3])).toBeNull();
    expect(multipartRefusal([7])).toBeNull();
    expect(multipartRefusal([16 * MiB + 1, 16 * MiB, 3])).toMatchObject({ code: "InvalidPart" });
    expect(multipartRefusal([16 * MiB, 16 * MiB + 1])).toMatchObject({ code: "InvalidPart" });
    expect(multipartRefusal([MiB, MiB, 5])).toMatchObject({ code: "EntityTooSmall" });
  });

  describe("through a front that fails the first part", () => {
    let front: Awaited<ReturnType<typeof startStorageFront>>;
    beforeAll(async () => {
      front = await startStorageFront();
      front.forwardTo(s3.endpoint);
    });
    afterAll(() => front.stop());
    const viaFront = () =>
      createUploader({
        endpoint: front.endpoint,
        region: "auto",
        bucket: "outputs",
        accessKeyId: s3.accessKeyId,
        secretAccessKey: s3.secretAccessKey,
      });
    const isFirstPart = (url = "") => url.includes("partNumber=1&");
    const chunks = (data: Buffer) =>
      Array.from({ length: Math.ceil(data.length / 65536) }, (_, i) => data.subarray(i * 65536, (i + 1) * 65536));
    const parts = (data: Buffer) => Readable.from(chunks(data));
    /** The first part's bytes, the rest only once storage has answered that part: no one awaits it then. */
    const slowAfterFirstPart = (data: Buffer) =>
      Readable.from(
        (async function* () {
          yield* chunks(data.subarray(0, PART_SIZE));
          await vi.waitFor(() => expect(front.refused().answer403).toBe(1), { timeout: 30_000, interval: 10 });
          yield* chunks(data.subarray(PART_SIZE));
        })(),
      );

    const fileOf = async (data: Buffer) => {
      const path = join(await mkdtemp(join(tmpdir(), "up-")), "piece.mkv");
      await writeFile(path, data);
      return path;
    };

    it("a file of several parts' size (up to ONE_PUT_BYTES) goes up in one PUT streamed from the disk, byte for byte", async () => {
      const seen: string[] = [];
      front.judge((req) => {
        seen.push(`${req.method} ${req.url} ${req.headers["content-length"]}`);
        return "pass";
      });
      const data = randomBytes(PART_SIZE * 3 + 4321);
      expect(data.length).toBeLessThan(ONE_PUT_BYTES);
      expect(await viaFront().uploadFile("a/piece.mkv", await fileOf(data), "application/octet-stream")).toBe(
        data.length,
      );
      expect(seen).toEqual([`PUT /outputs/a/piece.mkv ${data.length}`]);
      expect((await read("a/piece.mkv")).equals(data)).toBe(true);
    });

    it("a file's PUT whose connection breaks is sent again, read afresh from the disk, and the object is whole", async () => {
      let broken = 0;
      front.judge((req) => (req.method === "PUT" && broken++ < 2 ? "close" : "pass"));
      const data = randomBytes(PART_SIZE * 2 + 99);
      expect(await viaFront().uploadFile("a/again.mkv", await fileOf(data), "application/octet-stream")).toBe(
        data.length,
      );
      expect(broken).toBe(3);
      expect((await read("a/again.mkv")).equals(data)).toBe(true);
    });

    it("a part whose connection breaks is sent again, and the object is whole", async () => {
      let broken = 0;
      front.judge((req) => (isFirstPart(req.url) && broken++ < 2 ? "close" : "pass"));
      const data = randomBytes(PART_SIZE * 3 + 777);
      expect(await viaFront().uploadStream("a/reset.zip", parts(data), "application/zip")).toBe(data.length);
      expect(broken).toBe(3);
      expect((await read("a/reset.zip")).equals(data)).toBe(true);
    });

    it("a part storage refuses fails the upload: the object is not assembled without it", async () => {
      front.judge((req) => (isFirstPart(req.url) ? "answer403" : "pass"));
      const err = await viaFront()
        .uploadStream("a/gap.zip", slowAfterFirstPart(randomBytes(PART_SIZE * 3 + 777)), "application/zip")
        .catch((e) => e);
      expect(err).toMatchObject({ kind: "upload", retryable: true });
      expect(err.message).toMatch(/part 1 answered HTTP 403/);
      expect(front.refused().answer403).toBe(1);
      expect((await read("a/gap.zip")).toString()).toMatch(/NoSuchKey/);
    });
  });

  it("a refused upload fails with a retryable upload failure", async () => {
    const wrong = createUploader({
      endpoint: s3.endpoint,
      region: "auto",
      bucket: "outputs",
      accessKeyId: s3.accessKeyId,
      secretAccessKey: "wrong",
    });
    const err = await wrong
      .uploadStream("a/x.bin", Readable.from([randomBytes(PART_SIZE + 10)]), "application/zip")
      .catch((e) => e);
    expect(err).toMatchObject({ kind: "upload", retryable: true });
    expect(err.message).toMatch(/^Upload failed/);
  });
});
