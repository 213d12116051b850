import { appendFile, cp, mkdtemp, readdir, readFile, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { freePort } from "../../dev/cloud/free-port";
import { PROJECT_ROOT } from "../../dev/state";
import { startWorkerProcess, type WorkerProcess } from "../../dev/worker-process";

/**
 * `npm run dev` serves the Worker with --watch (dev/worker-serve.mjs). Here it is built from a
 * copy of the project, whose sources the test edits as a developer would.
 */
const NOT_COPIED = new Set(["node_modules", ".git", ".data", ".wrangler", "test-artifacts"]);

let project: string;
let worker: WorkerProcess;
let port: number;
const lines: string[] = [];

beforeAll(async () => {
  project = await mkdtemp(join(tmpdir(), "worker-watch-"));
  await cp(PROJECT_ROOT, project, {
    recursive: true,
    filter: (path) => !NOT_COPIED.has(relative(PROJECT_ROOT, path).split("/")[0]),
  });
  await symlink(join(PROJECT_ROOT, "node_modules"), join(project, "node_modules"));
  port = await freePort();
  worker = await startWorkerProcess({
    port,
    vars: {},
    watch: true,
    projectRoot: project,
    log: (line) => lines.push(line),
  });
}, 120_000);
afterAll(async () => {
  await worker?.stop();
  await rm(project, { recursive: true, force: true });
});

const get = async (path: string) => (await fetch(`${worker.url}${path}`)).text();
const edit = async (file: string, from: string, to: string) => {
  const path = join(project, file);
  const text = await readFile(path, "utf8");
  expect(text).toContain(from);
  await writeFile(path, text.replace(from, to));
};
const reloads = () => lines.filter((line) => /^Reloaded the Worker in \d+ ms$/.test(line)).length;
const served = (path: string, expected: string) =>
  vi.waitFor(async () => expect(await get(path)).toBe(expected), { timeout: 30_000, interval: 100 });
/**
 * The runner's reload line reaches this process through its output pipe, after the new build may
 * already have answered a request (on a loaded host, seconds after): waited for, never read at once.
 */
const reloadsReach = (count: number) =>
  vi.waitFor(() => expect(reloads()).toBe(count), { timeout: 30_000, interval: 100 });

describe("the local runner's --watch", () => {
  it("serves an edit of a source once it has built, and of a text module beside the sources; an edit of wrangler.toml builds again", async () => {
    expect(await get("/healthz")).toBe(`{"ok":true}`);
    await edit("worker/app.ts", "c.json({ ok: true })", "c.json({ ok: true, edit: 1 })");
    await served("/healthz", `{"ok":true,"edit":1}`);

    // A stylesheet the source map does not name: its directory holds no source of the bundle.
    await appendFile(join(project, "worker/dashboard/assets/dashboard.css"), "\n/* edited while served */\n");
    await vi.waitFor(
      async () => expect(await get("/dashboard/assets/dashboard.css")).toContain("/* edited while served */"),
      { timeout: 30_000, interval: 100 },
    );
    await reloadsReach(2);

    // wrangler.toml, where the compatibility settings and vars come from, builds again too.
    await appendFile(join(project, "wrangler.toml"), "\n# edited while served\n");
    await reloadsReach(3);
    expect(await get("/healthz")).toBe(`{"ok":true,"edit":1}`);
  }, 90_000);

  it("a build that fails says why and leaves the previous build serving; the fix is served", async () => {
    // The first test's three reloads; one more would be a build set off by something but an edit.
    const before = 3;
    await appendFile(join(project, "worker/app.ts"), "\nexport const unfinished = ;\n");
    await vi.waitFor(
      () =>
        expect(lines.join("\n")).toMatch(
          /build error: The Worker did not build; the previous build still serves\.[\s\S]*worker\/app\.ts/,
        ),
      {
        timeout: 30_000,
        interval: 100,
      },
    );
    expect(await get("/healthz")).toBe(`{"ok":true,"edit":1}`);

    const broken = await readFile(join(project, "worker/app.ts"), "utf8");
    await writeFile(
      join(project, "worker/app.ts"),
      broken.replace("\nexport const unfinished = ;\n", "").replace("edit: 1", "edit: 2"),
    );
    await served("/healthz", `{"ok":true,"edit":2}`);
    // Only edits build: nothing the build writes sets the watch off again.
    await reloadsReach(before + 1);
  }, 90_000);

  it("a build that throws as workerd loads it says so, and nothing serves until the fix is loaded", async () => {
    const before = 4;
    await appendFile(join(project, "worker/app.ts"), '\nthrow new Error("thrown while loading");\n');
    await vi.waitFor(
      () =>
        expect(lines.join("\n")).toMatch(
          /Uncaught Error: thrown while loading[\s\S]*build error: workerd did not load the new build/,
        ),
      {
        timeout: 30_000,
        interval: 100,
      },
    );
    await expect(get("/healthz")).rejects.toThrow();

    await edit("worker/app.ts", '\nthrow new Error("thrown while loading");\n', "");
    await served("/healthz", `{"ok":true,"edit":2}`);
    await reloadsReach(before + 1);
    expect((await readdir(tmpdir())).filter((name) => name.startsWith(`vep-worker-${port}-`))).toEqual([]);
  }, 90_000);
});
