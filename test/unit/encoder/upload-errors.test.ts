import { createReadStream } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable } from "node:stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { JobFailure } from "../../../encoder/failure";
import { createUploader, type Uploader } from "../../../encoder/upload/s3";
import { zipStream } from "../../../encoder/upload/zip";

let dir: string;
let uploader: Uploader;

/** A port nothing listens on: the storage cannot be reached (failures before any request never get that far). */
async function closedPort(): Promise<number> {
  const server = createServer().listen(0, "127.0.0.1");
  await new Promise((r) => server.once("listening", r));
  const { port } = server.address() as { port: number };
  await new Promise((r) => server.close(r));
  return port;
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "upload-errors-"));
  const endpoint = `http://127.0.0.1:${await closedPort()}`;
  uploader = createUploader({ endpoint, region: "auto", bucket: "outputs", accessKeyId: "k", secretAccessKey: "s" });
});
afterAll(() => rm(dir, { recursive: true, force: true }));

/** The failure as the job shows it: retried, and without any file system path. */
async function failureOf(promise: Promise<unknown>) {
  const failure: JobFailure = await promise.then(
    () => expect.unreachable("the upload should fail"),
    (e) => e,
  );
  expect(failure).toMatchObject({ kind: "upload", retryable: true });
  expect(failure.message).not.toContain(dir);
  expect(failure.message).not.toMatch(/\/\w/);
  return failure;
}

describe("upload failures name no file system paths", () => {
  it("a stream that cannot read its file", async () => {
    const failure = await failureOf(
      uploader.uploadStream("k/out.zip", createReadStream(join(dir, "out", "gone.ts")), "application/zip"),
    );
    expect(failure.message).toBe("Upload failed: an output file could not be read (ENOENT)");
  });

  it("a ZIP member that is gone fails the upload before anything is sent", async () => {
    const failure = await failureOf(
      uploader.uploadStream("k/out.zip", zipStream(join(dir, "out"), ["index.m3u8"]), "application/zip"),
    );
    expect(failure.message).toBe("Upload failed: an output file could not be read (ENOENT)");
  });

  it("an output file that is not there", async () => {
    const failure = await failureOf(uploader.uploadFile("k/out.mp4", join(dir, "out", "output.mp4"), "video/mp4"));
    expect(failure.message).toBe("Upload failed: an output file could not be read (ENOENT)");
  });

  it("storage that cannot be reached", async () => {
    const failure = await failureOf(
      uploader.uploadStream("k/out.bin", Readable.from([Buffer.from("data")]), "application/octet-stream"),
    );
    expect(failure.message).toBe("Upload failed: the output could not be sent to storage (ECONNREFUSED)");
  });
});
