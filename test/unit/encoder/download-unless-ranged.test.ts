import { mkdtemp, readFile, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { downloadUnlessRanged } from "../../../encoder/source/download";
import { openRanged } from "../../../encoder/source/ranged";
import { type FixtureServer, startFixtureServer } from "../../e2e/fixtures";
import { startTrickleServer } from "../../security-media/servers";

/**
 * A single file's source is read where it is when it is large and its origin serves ranges
 * (docs/scaling.md#parts-that-read-the-source-by-ranges): the GET that would download it stops at
 * the headers. Anything else is downloaded by that same GET.
 */
const POLICY = { allowLoopback: true, maxBytes: 1 << 30, timeoutMs: 30_000 };
const BYTES = 3 * 1024 * 1024;
let origin: FixtureServer;
let dir: string;

beforeAll(async () => {
  [origin, dir] = await Promise.all([startFixtureServer(), mkdtemp(join(tmpdir(), "unless-ranged-"))]);
  await writeFile(join(origin.dir, "source.mp4"), Buffer.alloc(BYTES, 7));
});
afterAll(async () => {
  await origin?.stop();
  await rm(dir, { recursive: true, force: true });
});

describe("downloadUnlessRanged", () => {
  it("leaves a source at or over the size, from an origin serving ranges, in one request, nothing written", async () => {
    const dest = join(dir, "left");
    expect(await downloadUnlessRanged(origin.url("source.mp4"), dest, POLICY, BYTES)).toBeNull();
    expect(origin.hits("/source.mp4")).toBe(1);
    await expect(stat(dest)).rejects.toThrow();
  });

  it("downloads a smaller source, in the same one request", async () => {
    const dest = join(dir, "small");
    const downloaded = await downloadUnlessRanged(origin.url("source.mp4"), dest, POLICY, BYTES + 1);
    expect(downloaded?.bytes).toBe(BYTES);
    expect((await readFile(dest)).length).toBe(BYTES);
  });

  it("downloads a large source whose origin does not say it serves ranges", async () => {
    const dest = join(dir, "plain");
    const downloaded = await downloadUnlessRanged(origin.url("no-ranges/source.mp4"), dest, POLICY, 1);
    expect(downloaded?.bytes).toBe(BYTES);
    expect(origin.hits("/no-ranges/source.mp4")).toBe(1);
  });
});

describe("openRanged", () => {
  it("gives an answer whose status line and headers trickle in the download's stall window, and says so", async () => {
    const trickle = await startTrickleServer(100);
    try {
      const policy = { ...POLICY, minRate: { bytesPerSecond: 32 * 1024, windowMs: 500 } };
      await expect(openRanged(trickle.url("/headers/source.mp4"), policy)).rejects.toThrow(
        "the source sent less than 32 KiB/s for 0.5 s",
      );
    } finally {
      await trickle.stop();
    }
  });
});
