import { mkdir, mkdtemp, readdir, readFile, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { beforeEach, describe, expect, it } from "vitest";
import { NetworkError } from "../../../client";
import { CliFailure, EXIT } from "../../../cli/exit-codes";
import { assertWritableDestination, saveResponse } from "../../../cli/files";

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "vep-files-"));
});

/** A download whose connection breaks after `sent`. */
const broken = (sent: string) =>
  new Response(
    new ReadableStream({
      start(controller) {
        controller.enqueue(new TextEncoder().encode(sent));
        controller.error(new Error("socket hang up"));
      },
    }),
  );

describe("vep's downloads", () => {
  it("a download writes the whole file under its name, replacing what was there", async () => {
    const out = join(dir, "out.mp4");
    await writeFile(out, "the old file");
    expect(await saveResponse(new Response("the new output"), out)).toBe(14);
    expect(await readFile(out, "utf8")).toBe("the new output");
    expect(await readdir(dir)).toEqual(["out.mp4"]);
  });

  it("a download that breaks leaves no partial file: what was there stays as it was", async () => {
    const out = join(dir, "out.mp4");
    await writeFile(out, "the old file");
    await expect(saveResponse(broken("half of the"), out)).rejects.toBeInstanceOf(NetworkError);
    expect(await readFile(out, "utf8")).toBe("the old file");
    expect(await readdir(dir)).toEqual(["out.mp4"]);
    await expect(saveResponse(broken("half of the"), join(dir, "new.mp4"))).rejects.toBeInstanceOf(NetworkError);
    expect(await readdir(dir)).toEqual(["out.mp4"]);
  });

  it("a download stopped by Ctrl-C (its signal) ends with the signal's reason and writes nothing", async () => {
    const out = join(dir, "out.mp4");
    const stop = new AbortController();
    const endless = new Response(
      new ReadableStream({
        pull(controller) {
          controller.enqueue(new Uint8Array(64 * 1024));
          stop.abort(new CliFailure(EXIT.interrupted, "stopped the download"));
        },
      }),
    );
    await expect(saveResponse(endless, out, stop.signal)).rejects.toThrow("stopped the download");
    expect(await readdir(dir)).toEqual([]);
  });

  it("--out naming a directory, or in a directory that does not exist, is refused", async () => {
    await mkdir(join(dir, "sub"));
    await expect(assertWritableDestination(join(dir, "sub"))).rejects.toThrow(/cannot write .*sub: EISDIR/);
    await expect(assertWritableDestination(join(dir, "nowhere", "x.mp4"))).rejects.toThrow(/cannot write .*: ENOENT/);
    await expect(assertWritableDestination(join(dir, "x.mp4"))).resolves.toBeUndefined();
  });
});
