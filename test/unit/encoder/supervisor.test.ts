import { readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import {
  describeCrash,
  describeFailedReload,
  ENCODER_SOURCE_TREES,
  restartDelayMs,
  summariseStderr,
} from "../../../dev/encoder-process";
import { PROJECT_ROOT } from "../../../dev/state";

/** Every project file the encoder loads, following relative imports from its entry. */
function encoderModules(): string[] {
  const seen = new Set<string>();
  const visit = (file: string) => {
    if (seen.has(file)) return;
    seen.add(file);
    for (const [, specifier] of readFileSync(file, "utf8").matchAll(/(?:from|import)\s*\(?\s*"(\.{1,2}\/[^"]+)"/g)) {
      const base = resolve(dirname(file), specifier);
      const found = [base, `${base}.ts`, `${base}.tsx`, join(base, "index.ts")].find((path) =>
        statSync(path, { throwIfNoEntry: false })?.isFile(),
      );
      if (!found) throw new Error(`${relative(PROJECT_ROOT, file)} imports ${specifier}, which was not found`);
      if (/\.(ts|tsx|mts|js|mjs)$/.test(found)) visit(found);
    }
  };
  visit(join(PROJECT_ROOT, "encoder/main.ts"));
  return [...seen].map((path) => relative(PROJECT_ROOT, path));
}

describe("npm run dev's encoder supervisor", () => {
  it("restarts at once after a crash, then backs off while the crashes keep coming soon after each start", () => {
    expect([1, 2, 3, 4, 5, 6, 7, 8].map(restartDelayMs)).toEqual([0, 1000, 2000, 4000, 8000, 16000, 30000, 30000]);
  });

  it("reports how the encoder ended, its last stderr lines and what happens next", () => {
    const exit = {
      pid: 4242,
      code: 1,
      signal: null,
      stderrTail: [
        "ENCODER FAILURE: an uncaught exception outside any job; the process state is unknown, so it exits for a clean restart.",
        "Error: boom",
      ],
      uptimeMs: 12_345,
    };
    expect(describeCrash(exit, 2000, 8080)).toEqual([
      "ENCODER CRASHED: pid 4242 exited with code 1 after 12.3 s.",
      "  its last stderr lines:",
      "    ENCODER FAILURE: an uncaught exception outside any job; the process state is unknown, so it exits for a clean restart.",
      "    Error: boom",
      "  restarting it on port 8080 in 2 s; QStash delivers the jobs it had in flight again.",
    ]);
    expect(describeCrash({ ...exit, code: null, signal: "SIGKILL", stderrTail: [] }, 0, 8080)).toEqual([
      "ENCODER CRASHED: pid 4242 was killed by SIGKILL after 12.3 s.",
      "  it wrote nothing to stderr.",
      "  restarting it on port 8080 now; QStash delivers the jobs it had in flight again.",
    ]);
  });

  it("watches every directory the encoder loads a module of the project's from", () => {
    const modules = encoderModules();
    expect(modules.length).toBeGreaterThan(50);
    expect(modules).toContain("domain/jobs.ts");
    expect(modules.filter((path) => !ENCODER_SOURCE_TREES.includes(path.split("/")[0]))).toEqual([]);
  });

  it("reports an encoder that a change kept from starting, and that it waits for the next change", () => {
    expect(
      describeFailedReload({
        pid: 7,
        code: 1,
        signal: null,
        stderrTail: ['config.ts:53:26: ERROR: Unexpected ";"'],
        uptimeMs: 300,
      }),
    ).toEqual([
      "the encoder did not start after the change: pid 7 exited with code 1 after 0.3 s.",
      "  its last stderr lines:",
      '    config.ts:53:26: ERROR: Unexpected ";"',
      "  the next change starts it again; until then no job is encoded.",
    ]);
  });

  it("shows the end of stderr with each stack trace cut to its first two frames and no blank lines", () => {
    const frames = (n: number) => Array.from({ length: n }, (_, i) => `    at frame${i} (loader.js:${i}:1)`);
    expect(
      summariseStderr([
        "",
        "node:internal/modules/run_main:123",
        "Error [TransformError]: Transform failed with 1 error:",
        '/tmp/p/encoder/config.ts:53:26: ERROR: Unexpected ";"',
        ...frames(10),
        "",
        "Node.js v20.20.2",
      ]),
    ).toEqual([
      "node:internal/modules/run_main:123",
      "Error [TransformError]: Transform failed with 1 error:",
      '/tmp/p/encoder/config.ts:53:26: ERROR: Unexpected ";"',
      "    at frame0 (loader.js:0:1)",
      "    at frame1 (loader.js:1:1)",
      "    … 8 more frames",
      "Node.js v20.20.2",
    ]);
    expect(summariseStderr(["Error: a", ...frames(3), "Error: b", ...frames(1)])).toEqual([
      "Error: a",
      ...frames(2),
      "    … 1 more frame",
      "Error: b",
      ...frames(1),
    ]);
    expect(summariseStderr(Array.from({ length: 30 }, (_, i) => `line ${i}`))).toEqual(
      Array.from({ length: 12 }, (_, i) => `line ${i + 18}`),
    );
  });
});
