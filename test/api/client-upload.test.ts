/**
 * The typed client's direct upload (client/upload.ts, docs/uploads.md) against the running service
 * and the real S3 server: one PUT, a multipart upload with a part that fails once and is sent
 * again alone, and a refusal by storage that no retry can help.
 */
import { createHash } from "node:crypto";
import { Readable } from "node:stream";
import { describe, expect, it } from "vitest";
import { ApiError, createVepClient, UploadError, type UploadProgress } from "../../client";
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

  it("the single PUT carries the type the service stored: the Blob's, or one named from the filename; with neither, an ApiError before any PUT", async () => {
    const { api, puts } = await clientFor();
    const named = await api.upload(new Uint8Array(8), { filename: "captions.vtt" });
    expect(named).toMatchObject({ status: "completed", contentType: "text/vtt" });
    expect((await fetch(named.inputUrl as string)).headers.get("Content-Type")).toBe("text/vtt");
    // A Blob typed octet-stream (what many tools give) is named from the filename too.
    const octets = new Blob([new Uint8Array(8)], { type: "application/octet-stream" });
    expect(await api.upload(octets, { filename: "logo.PNG" })).toMatchObject({ contentType: "image/png" });
    expect(puts.get("single")).toBe(2);
    const err = await api.upload(new Uint8Array(8)).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(ApiError);
    expect(err).toMatchObject({ status: 400, kind: "bad-request", error: "Validation error" });
    expect((err as ApiError).body).toMatchObject({
      details: [{ field: "contentType", message: expect.stringMatching(/^must be given/) }],
    });
    expect(puts.get("single")).toBe(2);
  });

  it("a large file in parts: a part storage fails once (503) is sent again alone; progress to the whole; completed", async () => {
    const { api, puts } = await clientFor((url, count) =>
      url.searchParams.get("partNumber") === "2" && count === 1 ? new Response("busy", { status: 503 }) : undefined,
    );
    const bytes = new Uint8Array(new ArrayBuffer(SINGLE_UPLOAD_MAX_BYTES + 3 * 1024 * 1024));
    for (let i = 0; i < bytes.length; i += 4096) bytes[i] = i % 251;
    const progress: number[] = [];
    const upload = await api.upload(bytes, {
      contentType: "video/mp4",
      onProgress: (p) => progress.push(p.sentBytes),
      concurrency: 3,
    });
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
    const err = await api.upload(bytes, { filename: "long.mp4", concurrency: 2 }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(UploadError);
    expect(err).toMatchObject({ status: 403, part: 3, retryable: false });
    expect(puts.get("3")).toBe(1);
    // Two at a time: the part beside it may finish, but no part after them is begun.
    expect(puts.has("5")).toBe(false);
  });

  it("a stream of known size: in parts gathered in order (a Node Readable), or whole (a web stream read through its reader)", async () => {
    const { api } = await clientFor();
    const MiB = 1024 * 1024;
    const chunks = (count: number, length: number) =>
      Array.from({ length: count }, (_, i) => new Uint8Array(new ArrayBuffer(length)).fill(i % 256));
    const large = chunks(Math.ceil((SINGLE_UPLOAD_MAX_BYTES + 5 * MiB) / (3 * MiB)), 3 * MiB);
    const size = large.reduce((n, c) => n + c.length, 0);
    const whole = createHash("sha256");
    for (const c of large) whole.update(c);
    const upload = await api.upload(Readable.from(large), { size, contentType: "video/webm" });
    expect(upload).toMatchObject({ status: "completed", size });
    const served = new Uint8Array(await (await fetch(upload.inputUrl as string)).arrayBuffer());
    expect(createHash("sha256").update(served).digest("hex")).toBe(whole.digest("hex"));

    // A stream with no async iteration, as some browsers give: read through its reader.
    const small = new ReadableStream<Uint8Array>({
      start(controller) {
        for (const c of chunks(3, 1000)) controller.enqueue(c);
        controller.close();
      },
    });
    const readerOnly = { getReader: () => small.getReader() } as ReadableStream<Uint8Array>;
    const single = await api.upload(readerOnly, { size: 3000, filename: "tone.m4a" });
    expect(single).toMatchObject({ status: "completed", size: 3000 });
  });

  it("its creation is asked once more when its connection closed before any answer, and only once (docs/client-and-cli.md#connections-closed-before-an-answer)", async () => {
    const account = await newAccount("pro");
    const lost = (times: number) => {
      let posts = 0;
      const fetchLosing: typeof fetch = async (input, init) => {
        // openapi-fetch hands fetch a Request: its method and URL are there, not in init.
        const method = init?.method ?? (input instanceof Request ? input.method : "GET");
        const url = new URL(input instanceof Request ? input.url : String(input));
        if (method === "POST" && url.pathname.endsWith("/uploads") && ++posts <= times) {
          throw new TypeError("fetch failed", {
            cause: Object.assign(new Error("other side closed"), { code: "UND_ERR_SOCKET" }),
          });
        }
        return fetch(input, init);
      };
      return {
        api: createVepClient({ baseUrl: stack.apiUrl, apiKey: account.apiKey, fetch: fetchLosing }),
        posts: () => posts,
      };
    };
    const once = lost(1);
    expect(await once.api.upload(new Uint8Array(100), { filename: "a.mp4" })).toMatchObject({
      status: "completed",
      size: 100,
    });
    expect(once.posts()).toBe(2);
    const always = lost(Infinity);
    await expect(always.api.upload(new Uint8Array(100), { filename: "a.mp4" })).rejects.toThrow(
      /could not be reached: other side closed/,
    );
    expect(always.posts()).toBe(2);
  });

  it("a stream without its size, or shorter or longer than it, is refused with the reason", async () => {
    const { api, puts } = await clientFor();
    await expect(api.upload(Readable.from([new Uint8Array(10)]))).rejects.toThrow(/needs its size/);
    expect(puts.size).toBe(0);
    await expect(api.upload(Readable.from([new Uint8Array(10)]), { size: 20, filename: "a.mp4" })).rejects.toThrow(
      /ended after 10 bytes, before its size, 20/,
    );
    await expect(api.upload(Readable.from([new Uint8Array(30)]), { size: 20, filename: "a.mp4" })).rejects.toThrow(
      /more than its size/,
    );
    expect(puts.size).toBe(0);
  });
});
