import { unzipRaw, type Reader, type ZipEntry } from "unzipit";

/** The end-of-central-directory record with the longest comment a ZIP may carry. */
const TAIL_BYTES = 22 + 0xffff;

export class ObjectNotFoundError extends Error {}

/**
 * Random access to one object in storage through HTTP Range requests on a presigned GET, for
 * unzipit. The first request takes the object's tail, which holds the end record and, for the
 * archives the encoder writes, the whole central directory: listing costs one round trip and a
 * member two more (its local header, then its bytes, streamed).
 */
export class RangeReader implements Reader {
  private tail: { start: number; bytes: Uint8Array<ArrayBuffer> } | undefined;

  constructor(private readonly url: string) {}

  private async fetchRange(range: string): Promise<Response> {
    const res = await fetch(this.url, { headers: { Range: range } });
    if (res.status === 404) {
      await res.body?.cancel();
      throw new ObjectNotFoundError("The output is no longer in storage.");
    }
    if (res.status !== 206 && res.status !== 200) {
      await res.body?.cancel();
      throw new Error(`Storage range read ${range} failed with ${res.status}`);
    }
    return res;
  }

  async getLength(): Promise<number> {
    if (!this.tail) {
      const res = await this.fetchRange(`bytes=-${TAIL_BYTES}`);
      const bytes = new Uint8Array(await res.arrayBuffer());
      // A 200 (an object shorter than the suffix, on some servers) is the whole object.
      const total = res.status === 206 ? Number(/\/(\d+)$/.exec(res.headers.get("content-range") ?? "")?.[1]) : bytes.length;
      if (!Number.isSafeInteger(total)) throw new Error("Storage answered a range read without a usable Content-Range");
      this.tail = { start: total - bytes.length, bytes };
    }
    return this.tail.start + this.tail.bytes.length;
  }

  async read(offset: number, size: number): Promise<Uint8Array<ArrayBuffer>> {
    await this.getLength();
    const tail = this.tail!;
    if (offset >= tail.start && offset + size <= tail.start + tail.bytes.length) {
      return tail.bytes.slice(offset - tail.start, offset - tail.start + size);
    }
    if (size === 0) return new Uint8Array(0);
    const res = await this.fetchRange(`bytes=${offset}-${offset + size - 1}`);
    return new Uint8Array(await res.arrayBuffer());
  }

  async readStream(offset: number, size: number): Promise<ReadableStream<Uint8Array>> {
    if (size === 0) return new Response(new Uint8Array(0)).body!;
    const res = await this.fetchRange(`bytes=${offset}-${offset + size - 1}`);
    return res.body!;
  }
}

/** The member called `name` (exactly, as stored) in the ZIP at `url`, or undefined. */
export async function findZipMember(url: string, name: string): Promise<ZipEntry | undefined> {
  const { entries } = await unzipRaw(new RangeReader(url));
  return entries.find((entry) => entry.name === name && !entry.isDirectory);
}
