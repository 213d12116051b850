import { spawn } from "node:child_process";
import { once } from "node:events";
import { chmod, copyFile, mkdir, mkdtemp, open, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const RUN_ALL = resolve(import.meta.dirname, "../../run-all.sh");
const RUN_WORKERD = resolve(import.meta.dirname, "../../run-workerd.sh");
/**
 * The stand-ins on the PATH: each adds its arguments as a line to `<name>.args` and exits with
 * `<NAME>_CODE`; vitest's run of the workerd project exits with WORKERD_CODE, and its first
 * WORKERD_STALLS runs stall (a minute, past the watchdog's WORKERD_TIMEOUT); its run of the e2e
 * project exits with BESIDE_CODE. Each of those two prints a failed test as vitest does when its
 * code is not 0.
 */
const ON_PATH = ["biome", "knip", "redocly", "vitest"] as const;
/**
 * A checkout of its own: the script, package.json's typecheck and lint scripts, the type checker
 * where that looks for it, and Biome, knip, vitest and the OpenAPI document's lint (a `redocly`
 * stand-in for `npm run lint:openapi`) on the PATH.
 */
let root: string;

type Codes = {
  tsc: number;
  biome: number;
  knip: number;
  redocly: number;
  vitest: number;
  workerd: number;
  beside: number;
};
const PASSING: Codes = { tsc: 0, biome: 0, knip: 0, redocly: 0, vitest: 0, workerd: 0, beside: 0 };
/** The failed tests the e2e and workerd stand-ins print, as vitest prints one. */
const BESIDE_FAILURE = " FAIL   e2e  test/e2e/playback.test.ts > plays while it encodes";
const WORKERD_FAILURE = " FAIL   workerd  test/workerd/app.test.ts > serves the contract";

/** Each stand-in's arguments, null for one that did not run. */
async function argsOf(name: string): Promise<string | null> {
  return readFile(join(root, `${name}.args`), "utf8").catch(() => null);
}

/**
 * `npm test`'s script with stand-ins for the tools; `lintSeconds`: how long Biome takes before it
 * records; `workerdStalls`: how many of the workerd project's runs stall.
 */
async function runAll(args: string[], codes: Partial<Codes>, lintSeconds = 0, workerdStalls = 0) {
  await Promise.all(["tsc", ...ON_PATH].map((name) => rm(join(root, `${name}.args`), { force: true })));
  const { tsc, biome, knip, redocly, vitest, workerd, beside } = { ...PASSING, ...codes };
  const env = {
    ...process.env,
    PATH: `${join(root, "bin")}:${process.env.PATH}`,
    TSC_CODE: String(tsc),
    BIOME_CODE: String(biome),
    BIOME_SECONDS: String(lintSeconds),
    KNIP_CODE: String(knip),
    REDOCLY_CODE: String(redocly),
    VITEST_CODE: String(vitest),
    WORKERD_CODE: String(workerd),
    BESIDE_CODE: String(beside),
    WORKERD_STALLS: String(workerdStalls),
    WORKERD_TIMEOUT: "1",
  };
  // Into a file, not a pipe: the run's end is the script's own exit, not that of whatever it left running.
  const output = await open(join(root, "output.log"), "w");
  const run = spawn("sh", [join(root, "test/run-all.sh"), ...args], {
    env,
    cwd: root,
    stdio: ["ignore", output.fd, "ignore"],
  });
  const [code] = await once(run, "exit");
  await output.close();
  return {
    code,
    output: await readFile(join(root, "output.log"), "utf8"),
    tsc: await argsOf("tsc"),
    biome: await argsOf("biome"),
    knip: await argsOf("knip"),
    redocly: await argsOf("redocly"),
    vitest: await argsOf("vitest"),
  };
}

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), "run-all-"));
  await mkdir(join(root, "test"));
  await copyFile(RUN_ALL, join(root, "test/run-all.sh"));
  await copyFile(RUN_WORKERD, join(root, "test/run-workerd.sh"));
  const { typecheck, lint } = JSON.parse(
    await readFile(resolve(import.meta.dirname, "../../../package.json"), "utf8"),
  ).scripts;
  await writeFile(
    join(root, "package.json"),
    JSON.stringify({ name: "run-all-test", private: true, scripts: { typecheck, lint, "lint:openapi": "redocly" } }),
  );
  const tsc = join(root, "node_modules/typescript7/bin/tsc");
  await mkdir(join(tsc, ".."), { recursive: true });
  await writeFile(
    tsc,
    `require("fs").writeFileSync(${JSON.stringify(join(root, "tsc.args"))}, process.argv.slice(2).join(" ") + "\\n");\nprocess.exit(Number(process.env.TSC_CODE));\n`,
  );
  await mkdir(join(root, "bin"));
  for (const name of ON_PATH) {
    const code = `${name.toUpperCase()}_CODE`;
    const args = join(root, `${name}.args`);
    const wait = name === "biome" ? 'sleep "$BIOME_SECONDS"\n' : "";
    const workerd =
      name === "vitest"
        ? `case "$*" in *"--project workerd"*)\n  [ "$(grep -c "project workerd" "${args}")" -le "$WORKERD_STALLS" ] && sleep 60\n  [ "$WORKERD_CODE" -ne 0 ] && echo "${WORKERD_FAILURE}"\n  exit $WORKERD_CODE;;\n*"--project e2e"*)\n  [ "$BESIDE_CODE" -ne 0 ] && echo "${BESIDE_FAILURE}"\n  exit $BESIDE_CODE;;\nesac\n`
        : "";
    await writeFile(join(root, "bin", name), `#!/bin/sh\n${wait}echo "$@" >> "${args}"\n${workerd}exit $${code}\n`);
    await chmod(join(root, "bin", name), 0o755);
  }
});
afterAll(() => rm(root, { recursive: true, force: true }));

describe("npm test (test/run-all.sh): the type check (TypeScript 7, node_modules/typescript7), the lint and vitest side by side", () => {
  it("passes only when all pass; lints with Biome's check, changing nothing, then knip, then the OpenAPI document; hands its arguments to vitest", async () => {
    const { output: _, ...ran } = await runAll(["test/unit", "--project", "unit"], PASSING);
    expect(ran).toEqual({
      code: 0,
      tsc: "--noEmit\n",
      biome: "check --error-on-warnings .\n",
      knip: "\n",
      redocly: "\n",
      vitest: "run test/unit --project unit\n",
    });
  });

  it("fails with 1 when the type check fails, tests passing or not; with vitest's own code when only the tests fail", async () => {
    expect((await runAll([], { tsc: 2 })).code).toBe(1);
    expect((await runAll([], { tsc: 2, vitest: 3 })).code).toBe(1);
    expect((await runAll([], { vitest: 3 })).code).toBe(3);
  });

  it("fails with 1 when Biome or knip finds something, tests passing or not; knip runs only after Biome passes", async () => {
    expect(await runAll([], { biome: 1 })).toMatchObject({ code: 1, knip: null });
    expect((await runAll([], { biome: 1, vitest: 3 })).code).toBe(1);
    expect(await runAll([], { knip: 1 })).toMatchObject({ code: 1, biome: "check --error-on-warnings .\n" });
    expect(await runAll([], { redocly: 1 })).toMatchObject({ code: 1, knip: "\n" });
  });

  it("without arguments, runs the projects that mostly wait in a vitest beside the rest, and workerd in one of its own; --quick, the projects without FFmpeg", async () => {
    const lines = (args: string | null) => args?.trim().split("\n").sort();
    expect(lines((await runAll([], PASSING)).vitest)).toEqual([
      "run --project e2e --project security-media --project faults",
      "run --project unit --project render --project cloud --project cli --project security --project api --project dispatch",
      "run --project workerd",
    ]);
    expect(lines((await runAll(["--quick"], PASSING)).vitest)).toEqual([
      "run --project api --project dispatch",
      "run --project unit",
      "run --project workerd",
    ]);
    expect(lines((await runAll(["--reporter=dot"], PASSING)).vitest)).toEqual([
      "run --project !workerd --reporter=dot",
      "run --project workerd",
    ]);
    expect((await runAll([], { workerd: 2 })).code).toBe(2);
    expect((await runAll([], { workerd: 2, vitest: 3 })).code).toBe(3);
  });

  it("ends with each part's outcome, and the failed tests of the runs beside, whose output came first", async () => {
    const passed = await runAll([], PASSING);
    expect(passed.output.trimEnd().split("\n").slice(-6)).toEqual([
      "npm test:",
      "  type check: passed",
      "  lint: passed",
      "  vitest unit render cloud cli security api dispatch: passed",
      "  vitest e2e security-media faults: passed",
      "  vitest workerd: passed",
    ]);
    const failed = await runAll([], { beside: 1, tsc: 2 });
    expect(failed.code).toBe(1);
    expect(failed.output.trimEnd().split("\n").slice(-6)).toEqual([
      "  type check: FAILED (exit 2)",
      "  lint: passed",
      "  vitest unit render cloud cli security api dispatch: passed",
      "  vitest e2e security-media faults: FAILED (exit 1)",
      "  vitest workerd: passed",
      `    ${BESIDE_FAILURE}`,
    ]);
    const named = await runAll(["test/unit"], { vitest: 3, workerd: 1 });
    expect(named.output.trimEnd().split("\n").slice(-3)).toEqual([
      "  vitest --project !workerd test/unit: FAILED (exit 3)",
      "  vitest workerd: FAILED (exit 1)",
      `    ${WORKERD_FAILURE}`,
    ]);
  });

  it("names every project of vitest.config.ts once among its runs", async () => {
    const script = await readFile(RUN_ALL, "utf8");
    const listed = (name: string) =>
      /^[A-Z_]+="([^"]*)"$/m.exec(script.slice(script.indexOf(`\n${name}=`)))?.[1].split(" ");
    const { default: config } = await import("../../../vitest.config");
    const names = (config.test?.projects ?? []).map((p) =>
      typeof p === "string" ? "workerd" : (p as { test?: { name?: string } }).test?.name,
    );
    expect([...(listed("MAIN") ?? []), ...(listed("BESIDE") ?? []), "workerd"].sort()).toEqual(names.sort());
    expect([...(listed("QUICK_MAIN") ?? []), ...(listed("QUICK_BESIDE") ?? [])].sort()).toEqual([
      "api",
      "dispatch",
      "unit",
    ]);
  });

  it("a workerd run that stalls is stopped after WORKERD_TIMEOUT and tried once more; stalled twice, the run fails", async () => {
    const once = await runAll([], PASSING, 0, 1);
    expect(once.code).toBe(0);
    expect(once.vitest?.match(/--project workerd/g)).toHaveLength(2);
    const twice = await runAll([], PASSING, 0, 2);
    expect(twice.code).toBe(124);
    expect(twice.vitest?.match(/--project workerd/g)).toHaveLength(2);
  });

  it("ends only when the lint has: a type check that fails first leaves nothing running", async () => {
    expect(await runAll([], { tsc: 2 }, 1)).toMatchObject({
      code: 1,
      biome: "check --error-on-warnings .\n",
      knip: "\n",
    });
  });
});
