import type { EventEmitter } from "node:events";
import { mkdtemp, readdir, readlink, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Readable } from "node:stream";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import yauzl from "yauzl";
import { zipStream } from "../../../encoder/upload/zip";

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "zip-"));
  await writeFile(join(dir, "a.ts"), "segment a");
  await writeFile(join(dir, "index.m3u8"), "#EXTM3U\n");
});
afterAll(() => rm(dir, { recursive: true, force: true }));

const unhandled: unknown[] = [];
const record = (reason: unknown) => unhandled.push(reason);
beforeEach(() => {
  unhandled.length = 0;
  process.on("unhandledRejection", record);
});
afterEach(() => {
  process.off("unhandledRejection", record);
});

async function consume(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk);
  return Buffer.concat(chunks);
}

function entryNames(zip: Buffer): Promise<string[]> {
  return new Promise((resolve, reject) =>
    yauzl.fromBuffer(zip, { lazyEntries: true }, (err, file) => {
      if (err) return reject(err);
      const names: string[] = [];
      file.on("entry", (entry) => {
        names.push(entry.fileName);
        file.readEntry();
      });
      file.on("end", () => resolve(names));
      file.readEntry();
    }),
  );
}

describe("zipStream", () => {
  it("streams every member", async () => {
    expect(await entryNames(await consume(zipStream(dir, ["index.m3u8", "a.ts"])))).toEqual(["index.m3u8", "a.ts"]);
  });

  it("a member that cannot be stat'ed fails the stream instead of being left out", async () => {
    const err = await consume(zipStream(dir, ["index.m3u8", "missing.ts", "a.ts"])).catch((e) => e);
    expect(err).toBeInstanceOf(Error);
    expect(err.code).toBe("ENOENT");
  });

  it("a failure of the ZIP writer fails the stream and leaves no unhandled rejection", async () => {
    const stream = zipStream(dir, ["index.m3u8", "a.ts"]);
    const reading = consume(stream).catch((e) => e);
    // The ZIP writer inside archiver failing: what rejects finalize()'s promise.
    (stream as unknown as { _module: { engine: EventEmitter } })._module.engine.emit(
      "error",
      new Error("writer failed"),
    );
    expect((await reading).message).toBe("writer failed");
    // Node reports a promise rejected without a handler once the microtask queue has drained: one turn of the event loop.
    await new Promise((r) => setImmediate(r));
    expect(unhandled).toEqual([]);
  });

  it("a reader that stops early (a failed upload, a cancel) leaves no member file open", async () => {
    const big = await mkdtemp(join(tmpdir(), "zip-big-"));
    try {
      const names = ["0.ts", "1.ts", "2.ts"];
      for (const name of names) await writeFile(join(big, name), Buffer.alloc(8 * 1024 * 1024, 0x47));
      const openMembers = async () => {
        const open: string[] = [];
        for (const fd of await readdir("/proc/self/fd")) {
          const target = await readlink(`/proc/self/fd/${fd}`).catch(() => "");
          if (target.startsWith(big)) open.push(target);
        }
        return open;
      };
      let read = 0;
      const stream = zipStream(big, names);
      for await (const chunk of stream) {
        read += (chunk as Buffer).length;
        if (read > 10 * 1024 * 1024) break;
      }
      // The members close as the stream is destroyed, after the loop's break: wait for the last to go.
      await vi.waitFor(async () => expect(await openMembers()).toEqual([]), { timeout: 10_000, interval: 10 });
    } finally {
      await rm(big, { recursive: true, force: true });
    }
  });
});
