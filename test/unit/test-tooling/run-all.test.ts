import { execFile } from "node:child_process";
import { chmod, copyFile, mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const RUN_ALL = resolve(import.meta.dirname, "../../run-all.sh");
/** A checkout of its own: the script, package.json's typecheck script, the type checker where that looks for it, and vitest on the PATH. */
let root: string;

/** `npm test`'s script with stand-ins for the type checker and vitest: each records its arguments and exits with the code it is given. */
async function runAll(args: string[], codes: { tsc: number; vitest: number }) {
  const env = {
    ...process.env,
    PATH: `${join(root, "bin")}:${process.env.PATH}`,
    TSC_CODE: String(codes.tsc),
    VITEST_CODE: String(codes.vitest),
  };
  const code = await promisify(execFile)("sh", [join(root, "test/run-all.sh"), ...args], { env, cwd: root }).then(
    () => 0,
    (err: { code: number }) => err.code,
  );
  return {
    code,
    tsc: await readFile(join(root, "tsc.args"), "utf8"),
    vitest: await readFile(join(root, "vitest.args"), "utf8"),
  };
}

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), "run-all-"));
  await mkdir(join(root, "test"));
  await copyFile(RUN_ALL, join(root, "test/run-all.sh"));
  const { typecheck } = JSON.parse(
    await readFile(resolve(import.meta.dirname, "../../../package.json"), "utf8"),
  ).scripts;
  await writeFile(
    join(root, "package.json"),
    JSON.stringify({ name: "run-all-test", private: true, scripts: { typecheck } }),
  );
  const tsc = join(root, "node_modules/typescript7/bin/tsc");
  await mkdir(join(tsc, ".."), { recursive: true });
  await writeFile(
    tsc,
    `require("fs").writeFileSync(${JSON.stringify(join(root, "tsc.args"))}, process.argv.slice(2).join(" ") + "\\n");\nprocess.exit(Number(process.env.TSC_CODE));\n`,
  );
  const vitest = join(root, "bin/vitest");
  await mkdir(join(vitest, ".."));
  await writeFile(vitest, `#!/bin/sh\necho "$@" > "${join(root, "vitest.args")}"\nexit $VITEST_CODE\n`);
  await chmod(vitest, 0o755);
});
afterAll(() => rm(root, { recursive: true, force: true }));

describe("npm test (test/run-all.sh): the type check (TypeScript 7, node_modules/typescript7) and vitest side by side", () => {
  it("passes only when both pass, and hands its arguments to vitest", async () => {
    expect(await runAll(["test/unit", "--project", "unit"], { tsc: 0, vitest: 0 })).toEqual({
      code: 0,
      tsc: "--noEmit\n",
      vitest: "run test/unit --project unit\n",
    });
  });

  it("fails with 1 when the type check fails, tests passing or not; with vitest's own code when only the tests fail", async () => {
    expect((await runAll([], { tsc: 2, vitest: 0 })).code).toBe(1);
    expect((await runAll([], { tsc: 2, vitest: 3 })).code).toBe(1);
    expect((await runAll([], { tsc: 0, vitest: 3 })).code).toBe(3);
  });
});
