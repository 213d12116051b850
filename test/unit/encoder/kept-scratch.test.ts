import { existsSync } from "node:fs";
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { keptScratch } from "../../../encoder/split/kept-scratch";

/** docs/scaling.md#scratch-kept-where-it-was-made */
describe("the inputs an encoder cut, kept for its own later tasks", () => {
  let root: string;
  let cut: string;
  const store = () => join(root, "pieces");
  beforeEach(async () => {
    root = await mkdtemp(join(tmpdir(), "local-pieces-"));
    cut = join(root, "job-1", "1.mkv");
    await mkdir(join(root, "job-1"));
    await writeFile(cut, "piece one");
  });
  afterEach(() => rm(root, { recursive: true, force: true }));

  it("a piece kept outlives its job's dir, and is taken once, while storage still holds the object it stored", async () => {
    const pieces = await keptScratch(store());
    await pieces.keep("scratch/j/in/1", cut, '"tag-1"');
    await rm(join(root, "job-1"), { recursive: true });
    const taken = await pieces.take("scratch/j/in/1", async () => '"tag-1"');
    expect(taken).toBeDefined();
    expect(await readFile(taken!.path, "utf8")).toBe("piece one");
    expect(taken!.bytes).toBe("piece one".length);
    expect(await pieces.take("scratch/j/in/1", async () => '"tag-1"')).toBeUndefined();
    await taken!.release();
    expect(await readdir(store())).toEqual([]);
  });

  it("a piece whose stored object was replaced (another tag) or is gone is not used, and is deleted", async () => {
    const pieces = await keptScratch(store());
    await pieces.keep("a", cut, '"tag-1"');
    expect(await pieces.take("a", async () => '"tag-2"')).toBeUndefined();
    await writeFile(join(root, "job-1", "2.mkv"), "piece two");
    await pieces.keep("b", join(root, "job-1", "2.mkv"), '"tag-2"');
    expect(await pieces.take("b", async () => undefined)).toBeUndefined();
    await pieces.keep("c", cut, '"tag-3"');
    expect(
      await pieces.take("c", async () => {
        throw new Error("storage did not answer");
      }),
    ).toBeUndefined();
    expect(await readdir(store())).toEqual([]);
  });

  it("nothing is kept without storage's tag for it (a multipart upload's)", async () => {
    const pieces = await keptScratch(store());
    await pieces.keep("a", cut, undefined);
    expect(await readdir(store())).toEqual([]);
    expect(await pieces.take("a", async () => undefined)).toBeUndefined();
  });

  it("a piece not taken in time is deleted; a dropped one at once; a new store starts empty", async () => {
    const pieces = await keptScratch(store(), 50);
    await pieces.keep("a", cut, '"t"');
    await vi.waitFor(async () => expect(await readdir(store())).toEqual([]), { timeout: 10_000, interval: 10 });
    expect(await pieces.take("a", async () => '"t"')).toBeUndefined();

    await pieces.keep("b", cut, '"t"');
    await pieces.drop("b");
    expect(await readdir(store())).toEqual([]);

    await pieces.keep("c", cut, '"t"');
    expect(await readdir(store())).toHaveLength(1);
    await keptScratch(store());
    expect(await readdir(store())).toEqual([]);
  });

  it("keeping a key again replaces the piece kept under it", async () => {
    const pieces = await keptScratch(store());
    await pieces.keep("a", cut, '"old"');
    const again = join(root, "job-1", "again.mkv");
    await writeFile(again, "piece one, cut again");
    await pieces.keep("a", again, '"new"');
    expect(await readdir(store())).toHaveLength(1);
    const taken = await pieces.take("a", async () => '"new"');
    expect(await readFile(taken!.path, "utf8")).toBe("piece one, cut again");
    await taken!.release();
    expect(existsSync(taken!.path)).toBe(false);
  });
});
