import { mkdir, mkdtemp, rm, utimes, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { beforeEach, describe, expect, it } from "vitest";
import { INSTALLED_PACKAGES, isStale, listedInputs } from "../../../packages/vep/fresh.mjs";

let root: string;
const build = () => join(root, "dist/vep.mjs");
const inputs = () => join(root, "inputs.json");
const HOUR = 3600_000;

/** A build made from src/a.ts and one package, the files dated now, the build `builtAt`. */
async function built(builtAt: Date) {
  await Promise.all(["dist", "src", "node_modules/dep"].map((dir) => mkdir(join(root, dir), { recursive: true })));
  await writeFile(join(root, "src/a.ts"), "export {};");
  await writeFile(join(root, "node_modules/dep/index.js"), "");
  await writeFile(join(root, INSTALLED_PACKAGES), "{}");
  await writeFile(inputs(), JSON.stringify(listedInputs(["src/a.ts", "node_modules/dep/index.js"])));
  await writeFile(build(), "");
  await utimes(build(), builtAt, builtAt);
}

async function datedBack(path: string) {
  const old = new Date(Date.now() - 2 * HOUR);
  await utimes(join(root, path), old, old);
}

beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), "vep-fresh-"));
  return () => rm(root, { recursive: true, force: true });
});

describe("whether the checkout's vep must be built again (bin/vep.mjs)", () => {
  it("not when no input changed since the build", async () => {
    await built(new Date(Date.now() + HOUR));
    expect(await isStale(build(), inputs(), root)).toBe(false);
  });

  it("when one of the project's files changed after it", async () => {
    await built(new Date(Date.now() - HOUR));
    await datedBack(INSTALLED_PACKAGES);
    expect(await isStale(build(), inputs(), root)).toBe(true);
  });

  it("when packages were installed after it: npm's lock file inside node_modules stands for their files", async () => {
    await built(new Date(Date.now() - HOUR));
    await datedBack("src/a.ts");
    expect(await isStale(build(), inputs(), root)).toBe(true);
    await datedBack(INSTALLED_PACKAGES);
    expect(await isStale(build(), inputs(), root)).toBe(false);
  });

  it("when an input is gone, the build is missing, or its list of inputs is", async () => {
    await built(new Date(Date.now() + HOUR));
    await rm(join(root, "src/a.ts"));
    expect(await isStale(build(), inputs(), root)).toBe(true);
    await built(new Date(Date.now() + HOUR));
    await rm(inputs());
    expect(await isStale(build(), inputs(), root)).toBe(true);
    await built(new Date(Date.now() + HOUR));
    await rm(build());
    expect(await isStale(build(), inputs(), root)).toBe(true);
  });
});
