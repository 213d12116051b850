import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import { sessionNicenessOf, sessionPriority } from "../../../encoder/ffmpeg/priority";

/**
 * An encoder's session niceness (docs/benchmarks.md#benchplayable): Linux's autogroup shares the
 * CPU between sessions whatever their processes' niceness, so an encoder that leads its session
 * sets the session's to the lowest of its runs'.
 */
const dir = await mkdtemp(join(tmpdir(), "session-priority-"));
afterAll(() => rm(dir, { recursive: true, force: true }));

describe("an encoder's session niceness", () => {
  it("is the lowest of its runs', 0 with none", () => {
    expect(sessionNicenessOf([])).toBe(0);
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: 19 }), { minLength: 1 }), (runs) => {
        expect(sessionNicenessOf(runs)).toBe(Math.min(...runs));
      }),
    );
  });

  it("follows its runs as they begin, change and end, written to the autogroup only when it changes", async () => {
    const autogroup = join(dir, "autogroup");
    const session = sessionPriority(autogroup, async () => true);
    const written = () => readFile(autogroup, "utf8").catch(() => "never written");
    await session.add(101, 10);
    expect(await written(), "not enabled yet").toBe("never written");
    await session.enable();
    expect(await written()).toBe("10");
    await session.add(102, 0);
    expect(await written()).toBe("0");
    await session.add(103, 5);
    expect(await written()).toBe("0");
    await session.end(102);
    expect(await written()).toBe("5");
    await session.change(103, 10);
    expect(await written()).toBe("10");
    // A pid that is not one of its runs changes nothing.
    await session.change(999, 0);
    expect(await written()).toBe("10");
    await session.end(101);
    await session.end(103);
    expect(await written()).toBe("0");
  });

  it("writes nothing where the encoder does not lead its session, and survives a kernel without autogroup", async () => {
    const autogroup = join(dir, "not-leader");
    const follower = sessionPriority(autogroup, async () => false);
    await follower.enable();
    await follower.add(1, 10);
    await expect(readFile(autogroup, "utf8")).rejects.toThrow();
    const missing = sessionPriority(join(dir, "no", "such", "dir", "autogroup"), async () => true);
    await missing.enable();
    await expect(missing.add(1, 10)).resolves.toBeUndefined();
    await expect(missing.end(1)).resolves.toBeUndefined();
  });
});
