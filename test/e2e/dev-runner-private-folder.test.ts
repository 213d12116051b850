import { execFile } from "node:child_process";
import { copyFile, mkdir, mkdtemp, realpath, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, expect, it } from "vitest";
import { freePort } from "../../dev/cloud/free-port";
import { SHARED_DIR } from "../../dev/cloud/postgres-as-root";
import { PROJECT_ROOT } from "../../dev/state";
import { createApiClient, expectStatus } from "../support/api-client";
import { ctrlC, devEnv, processesMatching, readyBanner, spawnDev, workerOn } from "./dev-runner-support";

const run = promisify(execFile);

/**
 * `npm run dev` in a checkout under a private folder (mode 0700, as `mktemp -d` makes one, and as
 * /root is), with its .data there: as root, PostgreSQL runs as the user postgres, who can reach
 * neither the checkout's node_modules nor its .data. The checkout is this one's files as they
 * are now, with node_modules linked in (cp -al) rather than installed again.
 */
let parent: string;
let checkout: string;
/** Where the run kept its database, to be removed with the checkout. */
let kept: string | undefined;
beforeAll(async () => {
  parent = await mkdtemp(join(tmpdir(), "dev-runner-private-"));
  expect((await stat(parent)).mode & 0o777).toBe(0o700);
  checkout = join(parent, "checkout");
  const { stdout } = await run("git", ["ls-files", "-z", "--cached", "--others", "--exclude-standard"], {
    cwd: PROJECT_ROOT,
    maxBuffer: 16 * 1024 * 1024,
  });
  for (const file of stdout.split("\0").filter(Boolean)) {
    await mkdir(dirname(join(checkout, file)), { recursive: true });
    // A file deleted in the working tree is still listed until the deletion is committed.
    await copyFile(join(PROJECT_ROOT, file), join(checkout, file)).catch(() => undefined);
  }
  const modules = join(checkout, "node_modules");
  await run("cp", ["-al", join(PROJECT_ROOT, "node_modules"), modules]);
  // A linked file is this checkout's too: what a run rewrites (the Worker bundle cache) is copied instead.
  await rm(join(modules, ".cache"), { recursive: true, force: true });
  await run("cp", ["-a", join(PROJECT_ROOT, "node_modules", ".cache"), join(modules, ".cache")]).catch(() => undefined);
});
afterAll(async () => {
  await rm(parent, { recursive: true, force: true });
  if (kept?.startsWith(SHARED_DIR)) await rm(kept, { recursive: true, force: true });
});

it("starts in a checkout under a private folder, its ready API key answers, and Ctrl-C stops it whole", async () => {
  const port = await freePort();
  const dev = spawnDev(devEnv(undefined, { PORT: String(port) }), checkout);
  const pointer = join(checkout, ".data", "postgres");
  try {
    const banner = await readyBanner(dev);
    const apiKey = banner.match(/API key\s+(spk_\w+)/)?.[1];
    expectStatus(await createApiClient({ baseUrl: `http://127.0.0.1:${port}`, apiKey }).listJobs(), 200);
    kept = await realpath(pointer);
    if (process.getuid?.() === 0) {
      // Kept where the user postgres can reach it, linked from .data, and served by a copy of the build there.
      expect(kept.startsWith(`${SHARED_DIR}/`)).toBe(true);
      expect(banner).toContain(`data in ${kept}`);
      expect(processesMatching(`postgres -D ${kept}`).join("\n")).toContain(`${SHARED_DIR}/postgres/`);
    } else {
      expect(kept).toBe(pointer);
      expect(banner).toContain(`data in ${pointer}`);
    }
  } finally {
    ctrlC(dev.child);
    await dev.exited;
  }
  expect(dev.output()).not.toMatch(/EACCES|\n\s+at /);
  expect(dev.output()).toMatch(/Stopping…/);
  expect(workerOn(port)).toEqual([]);
  expect(processesMatching(`postgres -D ${kept}`)).toEqual([]);
});
