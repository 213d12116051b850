import { existsSync } from "node:fs";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import type { TestSpecification } from "vitest/node";
import { LONGEST_FIRST, LongestFirstSequencer } from "../../support/longest-first-sequencer";

const ROOT = resolve(import.meta.dirname, "../../..");

/** What BaseSequencer reads of a test file's specification: its file, its project's name and group. */
const testFile = (file: string, project: string, groupOrder: number) =>
  ({
    moduleId: join(ROOT, file),
    project: { name: project, config: { sequence: { groupOrder }, isolate: true } },
  }) as unknown as TestSpecification;

/** A fresh checkout's vitest: no file's duration nor size known. */
const sequencer = new LongestFirstSequencer({
  config: { root: ROOT },
  cache: { getFileTestResults: () => undefined, getFileStats: () => undefined },
} as never);

describe("the suite's order (test/support/longest-first-sequencer.ts)", () => {
  it("names only files that exist: a renamed one would silently lose its place", () => {
    for (const file of LONGEST_FIRST) expect(existsSync(join(ROOT, file)), file).toBe(true);
  });

  it("starts each group's listed files first, longest first, across projects; the rest keep vitest's order, and groups keep theirs", async () => {
    const files = [
      testFile("test/e2e/slice.test.ts", "e2e", 2),
      testFile("test/faults/worker-services.test.ts", "faults", 2),
      testFile("test/e2e/dev-runner.test.ts", "e2e", 2),
      testFile("test/unit/no-ffmpeg.test.ts", "unit", 0),
      testFile("test/api/quota.test.ts", "api", 1),
      testFile("test/cloud/qstash.test.ts", "cloud", 0),
      testFile("test/security/fuzz-jobs.test.ts", "security", 0),
    ];
    const order = (await sequencer.sort(files)).map((s) => s.moduleId.slice(ROOT.length + 1));
    expect(order).toEqual([
      "test/security/fuzz-jobs.test.ts",
      "test/cloud/qstash.test.ts",
      "test/unit/no-ffmpeg.test.ts",
      "test/api/quota.test.ts",
      "test/e2e/dev-runner.test.ts",
      "test/faults/worker-services.test.ts",
      "test/e2e/slice.test.ts",
    ]);
  });
});
