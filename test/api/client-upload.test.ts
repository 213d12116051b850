/**
 * The typed client's direct upload (client/upload.ts, docs/uploads.md) against the running service
 * and the real S3 server: one PUT, a multipart upload with a part that fails once and is sent
 * again alone, and a refusal by storage that no retry can help.
 */
import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { createVepClient, UploadError, type UploadProgress } from "../../client";
import { SINGLE_UPLOAD_MAX_BYTES } from "../../domain/uploads";
import { newAccount, stack } from "./harness";

/**
 * A client whose PUTs to storage go through `onPut` first: it may answer in storage's place (a
 * Response), or send the PUT to another URL (a URL).
 */
async function clientFor(onPut: (url: URL, count: number) => Response | URL | undefined = () => undefined) {
  const account = await newAccount("pro");
  const puts = new Map<string, number>();
  const fetchThrough: typeof fetch = async (input, init) => {
    const url = new URL(input instanceof Request ? input.url : String(input));
    if (init?.method === "PUT") {
      const part = url.searchParams.get("partNumber") ?? "single";
      const count = (puts.get(part) ?? 0) + 1;
      puts.set(part, count);
      const answered = onPut(url, count);
      if (answered instanceof Response) return answered;
      if (answered) return fetch(answered, init);
    }
    return fetch(input, init);
  };
  return { api: createVepClient({ baseUrl: stack.apiUrl, apiKey: account.apiKey, fetch: fetchThrough }), puts };
}

const sha256 = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest("hex");

describe("client.upload", () => {
  it("a small file: one PUT, answered completed, and its inputUrl serves the same bytes", async () => {
    const { api, puts } = await clientFor();
    const bytes = new TextEncoder().encode("a small video's bytes");
    const progress: UploadProgress[] = [];
    const upload = await api.upload(new Blob([bytes], { type: "video/mp4" }), {
      filename: "clip.mp4",
      onProgress: (p) => progress.push(p),
    });
    expect(upload).toMatchObject({ status: "completed", filename: "clip.mp4", contentType: "video/mp4", size: 21 });
    expect([...puts]).toEqual([["single", 1]]);
    expect(progress).toEqual([{ sentBytes: 21, totalBytes: 21 }]);
    const served = new Uint8Array(await (await fetch(upload.inputUrl as string)).arrayBuffer());
    expect(sha256(served)).toBe(sha256(bytes));
  });

  it("a large file in parts: a part storage fails once (503) is sent again alone; progress to the whole; completed", async () => {
    const { api, puts } = await clientFor((url, count) =>
      url.searchParams.get("partNumber") === "2" && count === 1 ? new Response("busy", { status: 503 }) : undefined,
    );
    const bytes = new Uint8Array(new ArrayBuffer(SINGLE_UPLOAD_MAX_BYTES + 3 * 1024 * 1024));
    for (let i = 0; i < bytes.length; i += 4096) bytes[i] = i % 251;
    const progress: number[] = [];
    const upload = await api.upload(bytes, { onProgress: (p) => progress.push(p.sentBytes), concurrency: 3 });
    expect(upload).toMatchObject({ status: "completed", size: bytes.length });
    const parts = Math.ceil(bytes.length / (upload.partSize as number));
    expect(puts.get("2")).toBe(2);
    expect([...puts].filter(([part, count]) => part !== "2" && count !== 1)).toEqual([]);
    expect(puts.size).toBe(parts);
    expect(progress).toHaveLength(parts);
    expect(progress.every((sent, i) => i === 0 || sent > progress[i - 1])).toBe(true);
    expect(progress.at(-1)).toBe(bytes.length);
    const served = new Uint8Array(await (await fetch(upload.inputUrl as string)).arrayBuffer());
    expect(served.length).toBe(bytes.length);
    expect(sha256(served)).toBe(sha256(bytes));
  });

  it("storage's refusal of a part (its signature broken) is an UploadError naming the part, not tried again", async () => {
    const { api, puts } = await clientFor((url) => {
      if (url.searchParams.get("partNumber") !== "3") return undefined;
      // Sent on to the real storage, which refuses it.
      url.searchParams.set("X-Amz-Signature", "0".repeat(64));
      return url;
    });
    const bytes = new Uint8Array(new ArrayBuffer(SINGLE_UPLOAD_MAX_BYTES + 1));
    const err = await api.upload(bytes, { concurrency: 2 }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(UploadError);
    expect(err).toMatchObject({ status: 403, part: 3, retryable: false });
    expect(puts.get("3")).toBe(1);
    // Two at a time: the part beside it may finish, but no part after them is begun.
    expect(puts.has("5")).toBe(false);
  });
});
