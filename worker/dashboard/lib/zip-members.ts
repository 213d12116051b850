import { unzipRaw, type Reader, type ZipEntry } from "unzipit";

export class ObjectNotFoundError extends Error {}

/**
 * Random access to one object in storage through HTTP Range requests on a presigned GET, for
 * unzipit. The first read (the end record's search) takes the object's last 64 KiB, which for
 * the archives the encoder writes holds the whole central directory too, so it is kept: a
 * member costs four round trips (length, tail, its local header, its bytes, streamed).
 */
class RangeReader implements Reader {
  private length: number | undefined;
  private kept: { start: number; bytes: Uint8Array<ArrayBuffer> } | undefined;

  constructor(private readonly url: string) {}

  private async fetchRange(first: number, last: number): Promise<Response> {
    const res = await fetch(this.url, { headers: { Range: `bytes=${first}-${last}` } });
    if (res.status === 404) {
      await res.body?.cancel();
      throw new ObjectNotFoundError("The output is no longer in storage.");
    }
    if (res.status !== 206) {
      await res.body?.cancel();
      throw new Error(`Storage range read ${first}-${last} answered ${res.status}, not 206`);
    }
    return res;
  }

  async getLength(): Promise<number> {
    if (this.length === undefined) {
      const res = await this.fetchRange(0, 0);
      await res.body?.cancel();
      const total = Number(/\/(\d+)$/.exec(res.headers.get("content-range") ?? "")?.[1]);
      if (!Number.isSafeInteger(total)) throw new Error("Storage answered a range read without a usable Content-Range");
      this.length = total;
    }
    return this.length;
  }

  async read(offset: number, size: number): Promise<Uint8Array<ArrayBuffer>> {
    const kept = this.kept;
    if (kept && offset >= kept.start && offset + size <= kept.start + kept.bytes.length) {
      return kept.bytes.slice(offset - kept.start, offset - kept.start + size);
    }
    if (size === 0) return new Uint8Array(0);
    const bytes = new Uint8Array(await (await this.fetchRange(offset, offset + size - 1)).arrayBuffer());
    if (!this.kept) this.kept = { start: offset, bytes };
    return bytes;
  }

  async readStream(offset: number, size: number): Promise<ReadableStream<Uint8Array>> {
    const body =
      size === 0 ? new Response(new Uint8Array(0)).body : (await this.fetchRange(offset, offset + size - 1)).body;
    if (!body) throw new Error("storage answered a range request without a body");
    return body;
  }
}

/** The member called `name` (exactly, as stored) in the ZIP at `url`, or undefined. */
export async function findZipMember(url: string, name: string): Promise<ZipEntry | undefined> {
  const { entries } = await unzipRaw(new RangeReader(url));
  return entries.find((entry) => entry.name === name && !entry.isDirectory);
}
