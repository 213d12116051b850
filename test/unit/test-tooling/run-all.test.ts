import { execFile } from "node:child_process";
import { chmod, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const RUN_ALL = resolve(import.meta.dirname, "../../run-all.sh");
let bin: string;

/** `npm test`'s script with stand-ins for tsc and vitest: each records its arguments and exits with the code it is given. */
async function runAll(args: string[], codes: { tsc: number; vitest: number }) {
  const env = { ...process.env, PATH: `${bin}:${process.env.PATH}`, TSC_CODE: String(codes.tsc), VITEST_CODE: String(codes.vitest) };
  const code = await promisify(execFile)("sh", [RUN_ALL, ...args], { env, cwd: bin }).then(
    () => 0,
    (err: { code: number }) => err.code,
  );
  return { code, tsc: await readFile(join(bin, "tsc.args"), "utf8"), vitest: await readFile(join(bin, "vitest.args"), "utf8") };
}

beforeAll(async () => {
  bin = await mkdtemp(join(tmpdir(), "run-all-"));
  for (const [tool, code] of [["tsc", "TSC_CODE"], ["vitest", "VITEST_CODE"]]) {
    await writeFile(join(bin, tool), `#!/bin/sh\necho "$@" > "${join(bin, `${tool}.args`)}"\nexit $${code}\n`);
    await chmod(join(bin, tool), 0o755);
  }
});
afterAll(() => rm(bin, { recursive: true, force: true }));

describe("npm test (test/run-all.sh): the type check and vitest side by side", () => {
  it("passes only when both pass, and hands its arguments to vitest", async () => {
    expect(await runAll(["test/unit", "--project", "unit"], { tsc: 0, vitest: 0 })).toEqual({ code: 0, tsc: "--noEmit\n", vitest: "run test/unit --project unit\n" });
  });

  it("fails with 1 when the type check fails, tests passing or not; with vitest's own code when only the tests fail", async () => {
    expect((await runAll([], { tsc: 2, vitest: 0 })).code).toBe(1);
    expect((await runAll([], { tsc: 2, vitest: 3 })).code).toBe(1);
    expect((await runAll([], { tsc: 0, vitest: 3 })).code).toBe(3);
  });
});
