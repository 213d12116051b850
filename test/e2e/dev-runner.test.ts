import { execFile, spawn } from "node:child_process";
import { chmod, mkdtemp, readdir, readFile, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { freePort } from "../../dev/cloud/free-port";
import { NEON_HTTP_APPLICATION_NAME, NEON_HTTP_POOL_SIZE } from "../../dev/cloud/neon-http";
import { CLOUD_NODE_FLAGS, ENCODER_NODE_FLAGS } from "../../dev/node-flags";
import { PROJECT_ROOT } from "../../dev/state";
import { TERMINAL_STATUSES, type JobListItem } from "../../client";
import { bodyOf, createApiClient, expectStatus, unchecked } from "../support/api-client";
import { ffprobeJson } from "../support/media";
import {
  ctrlC,
  ctrlCWhileBusy,
  devEnv,
  exists,
  listening,
  processesMatching,
  readyBanner,
  spawnDev,
  waitFor,
  workerOn,
} from "./dev-runner-support";
import { startFixtureServer, type FixtureServer } from "./fixtures";

const run = promisify(execFile);

/**
 * `npm run dev` as the README says, as a person runs it: no DATABASE_URL, no REDIS_URL, in a
 * terminal of its own (a process group), stopped by Ctrl-C, which the terminal sends to that
 * whole group. Its data goes to a temporary DATA_DIR, so a developer's own .data is untouched;
 * the runs below share it, as one checkout's runs share .data. The Worker's workerd runs in a
 * group of its own, beyond Ctrl-C's reach, so these tests check that nothing of it is left listening.
 */
let dataDir: string;
let fixtures: FixtureServer;
beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), "dev-runner-"));
  await chmod(dataDir, 0o755); // as root, PostgreSQL runs as the user postgres
  fixtures = await startFixtureServer();
});
afterAll(async () => {
  await fixtures.stop();
  await rm(dataDir, { recursive: true, force: true });
});

const env = (extra: Record<string, string> = {}) => devEnv(dataDir, extra);
const startDev = (port: number, extra: Record<string, string> = {}) => spawnDev(env({ PORT: String(port), ...extra }));

/** The lines under "Try it", as printed, without the banner's indent. */
function printedSequence(banner: string): string[] {
  const block = banner.slice(banner.indexOf("Try it"));
  const lines = block.split("\n").slice(1);
  return lines.slice(0, lines.indexOf("")).map((line) => line.replace(/^ {2}/, ""));
}

/** Pasted into a shell: bash, stopping at the first command that fails. */
async function paste(lines: string[], cwd: string) {
  return run("bash", ["-e", "-c", lines.join("\n")], { cwd, timeout: 240_000, maxBuffer: 16 * 1024 * 1024 });
}

const api = (port: number, key: string) => createApiClient({ baseUrl: `http://127.0.0.1:${port}`, apiKey: key });

/** The admin CLI as the README shows it, against the running dev service found through DATA_DIR. */
async function adminCli(args: string[]) {
  const { stdout } = await run("npm", ["run", "-s", "admin", "--", ...args], { cwd: PROJECT_ROOT, env: env() });
  return JSON.parse(stdout);
}

/** Every job of the account, page by page. */
async function allJobs(port: number, key: string): Promise<JobListItem[]> {
  const jobs: JobListItem[] = [];
  for (let page = 1; ; page++) {
    const res = await api(port, key).listJobs(`limit=100&page=${page}`);
    expectStatus(res, 200);
    jobs.push(...res.body.jobs);
    if (!res.body.pagination.hasNext) return jobs;
  }
}

/** The banner's dashboard sign-in works and opens the same account as its API key. */
async function expectDashboardSignIn(banner: string, port: number, apiKey: string) {
  const [, url, email, password] = banner.match(/Dashboard\s+(\S+)\s+Sign in\s+(\S+)\s+password (\S+)/)!;
  expect(url).toBe(`http://127.0.0.1:${port}/dashboard`);
  const form = await fetch(`${url}/signin`);
  const formCookie = form.headers.getSetCookie()[0].split(";")[0];
  const token = /name="_csrf" value="([^"]+)"/.exec(await form.text())![1];
  const signIn = await fetch(`${url}/signin`, {
    method: "POST",
    redirect: "manual",
    headers: {
      "Content-Type": "application/x-www-form-urlencoded",
      Origin: `http://127.0.0.1:${port}`,
      Cookie: formCookie,
    },
    body: new URLSearchParams({ _csrf: token, email, password }),
  });
  expect(signIn.status).toBe(303);
  const session = signIn.headers.getSetCookie()[0].split(";")[0];
  const keys = await fetch(`${url}/keys`, { headers: { Cookie: session } });
  expect(await keys.text()).toContain(`…${apiKey.slice(-4)}`);
}

/** Shared by the runs below, as one checkout's runs share its data. */
let freeKey: string;
/**
 * The free account's jobs after the first run: the printed sequence's (the 720p, the timeline,
 * the CLI's 480p and stream), the quick start's file from disk, and the same file served by http.server.
 */
const FIRST_RUN_JOBS = 6;
let loadKey: string;
const createdByLoad: string[] = [];

describe("npm run dev with no configuration", () => {
  it("runs an embedded PostgreSQL under DATA_DIR, prints a sequence that works as pasted, holds 50 concurrent clients without a 5xx, refuses a second run; Ctrl-C stops it all", async () => {
    // What a killed run leaves: a lock naming a process that is gone.
    const gone = spawn("true");
    await new Promise((resolve) => gone.once("exit", resolve));
    await writeFile(join(dataDir, "in-use.json"), JSON.stringify({ pid: gone.pid, started: "1", about: {} }));

    const port = await freePort();
    const dev = startDev(port);
    try {
      const banner = await readyBanner(dev);
      expect(banner).toContain(`http://127.0.0.1:${port}/api/v1`);
      expect(banner).toMatch(/loopback sources and webhooks ALLOWED/);
      expect(banner).toContain(`embedded PostgreSQL, data in ${join(dataDir, "postgres")}`);
      expect(banner).toMatch(/\(free plan/);
      // A newcomer's first screen carries no warning: the Worker is bundled with nodejs_compat, as deployed.
      expect(banner).not.toMatch(/WARNING|nodejs_compat/);
      // The Worker's bundle was built to a temporary directory, gone once workerd holds it.
      expect((await readdir(tmpdir())).filter((name) => name.startsWith(`vep-worker-${port}-`))).toEqual([]);
      freeKey = banner.match(/API key\s+(spk_\w+)/)![1];
      const databaseUrl = banner.match(/postgres:\/\/\S+/)![0];
      await expectDashboardSignIn(banner, port, freeKey);

      // One run per data directory: a second is told which one holds it, and exits.
      const secondPort = await freePort();
      const second = startDev(secondPort);
      expect(await second.exited).not.toBe(0);
      expect(second.output()).toMatch(
        new RegExp(`already running on ${dataDir} \\(pid \\d+, API http://127\\.0\\.0\\.1:${port}\\)`),
      );
      expect(await listening(secondPort)).toBe(false);

      // The printed sequence, pasted as is: a preset job on the sample, the timeline validated and rendered.
      const sequence = printedSequence(banner);
      expect(sequence.join("\n")).not.toContain("example.com");
      const work = await mkdtemp(join(tmpdir(), "dev-runner-paste-"));
      try {
        const { stdout } = await paste(sequence, work);
        expect(stdout.match(/"status":"completed"/g)).toHaveLength(2);
        expect(stdout).toMatch(/"valid":true.*"tracks":2/);
        const encoded = await ffprobeJson(join(work, "sample-720p.mp4"));
        expect(encoded.streams.map((s) => s.codec_type).sort()).toEqual(["audio", "video"]);
        expect(encoded.streams.find((s) => s.codec_type === "video")).toMatchObject({ width: 1280, height: 720 });
        expect(Number(encoded.format.duration)).toBeCloseTo(10, 0);
        const rendered = await ffprobeJson(join(work, "timeline.mp4"));
        expect(Number(rendered.format.duration)).toBeCloseTo(8, 0);
        const fromCli = await ffprobeJson(join(work, "sample-480p.mp4"));
        expect(fromCli.streams.find((s) => s.codec_type === "video")).toMatchObject({ width: 854, height: 480 });
        // The stream's link, printed by the CLI and by npm run dev itself while the job encoded, plays.
        const link = new RegExp(`http://127\\.0\\.0\\.1:${port}/play/[0-9a-f-]{36}/\\d+\\.[\\w-]+/master\\.m3u8`);
        const fromCliLink = stdout.match(link)?.[0];
        expect(fromCliLink).toBeDefined();
        const announcement = new RegExp(`\\[dev\\] job [0-9a-f-]{36} plays while it encodes: (${link.source})`);
        const announced = await vi.waitFor(() => dev.output().match(announcement)![1], { timeout: 10_000 });
        expect(announced.split("/")[4]).toBe(fromCliLink!.split("/")[4]);
        const master = await fetch(announced);
        expect(master.status).toBe(200);
        expect(await master.text()).toMatch(/^#EXTM3U/);
        expect((await stat(join(work, "sample-hls.zip"))).size).toBeGreaterThan(0);

        // The quick start's step 4: your own file from disk, uploaded directly and encoded with
        // `npx vep … --out`.
        await paste(
          [
            `export VEP_API_KEY=${freeKey} VEP_API_URL=http://127.0.0.1:${port}`,
            `cd ${PROJECT_ROOT}`,
            `npx vep encode ${join(work, "sample-720p.mp4")} --preset mp4_264_480p --out ${join(work, "own-480p.mp4")}`,
          ],
          work,
        );
        const own = await ffprobeJson(join(work, "own-480p.mp4"));
        expect(own.streams.find((s) => s.codec_type === "video")).toMatchObject({ width: 854, height: 480 });

        // A URL still works as the source: a file served by Python's http.server (HTTP/1.0, the
        // connection closed after each body), as a user may serve one.
        const pythonPort = await freePort();
        const python = spawn(
          "python3",
          ["-m", "http.server", String(pythonPort), "--bind", "127.0.0.1", "--directory", work],
          { stdio: "ignore" },
        );
        try {
          await vi.waitFor(async () => expect(await listening(pythonPort)).toBe(true), {
            timeout: 15_000,
            interval: 100,
          });
          await paste(
            [
              `export VEP_API_KEY=${freeKey} VEP_API_URL=http://127.0.0.1:${port}`,
              `cd ${PROJECT_ROOT}`,
              `npx vep encode http://127.0.0.1:${pythonPort}/sample-720p.mp4 --preset mp4_264_480p --out ${join(work, "served-480p.mp4")}`,
            ],
            work,
          );
        } finally {
          python.kill();
        }
        const served = await ffprobeJson(join(work, "served-480p.mp4"));
        expect(served.streams.find((s) => s.codec_type === "video")).toMatchObject({ width: 854, height: 480 });
      } finally {
        await rm(work, { recursive: true, force: true });
      }

      // The Worker holds no connection of its own: its queries go over HTTP to the Neon stand-in,
      // whose warm pool is bounded; every other connection a burst opens is gone again after it.
      const watcher = new pg.Pool({ connectionString: databaseUrl, max: 1 });
      const connections = async (standIn: boolean) =>
        Number(
          (
            await watcher.query(
              `select count(*) from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid() and (application_name = $1) = $2`,
              [NEON_HTTP_APPLICATION_NAME, standIn],
            )
          ).rows[0].count,
        );
      try {
        const before = await connections(false);
        const burst = await Promise.all(Array.from({ length: 50 }, () => api(port, freeKey).listJobs()));
        expect(burst.map((r) => r.status)).toEqual(Array(50).fill(200));
        expect(await connections(true)).toBeGreaterThan(0);
        expect(await connections(true)).toBeLessThanOrEqual(NEON_HTTP_POOL_SIZE);
        await vi.waitFor(async () => expect(await connections(false)).toBe(before), { timeout: 30_000, interval: 250 });
      } finally {
        await watcher.end();
      }

      // 50 clients at once, each creating a job on a small local source, then reading it and
      // listing jobs until the encoder has reported it finished.
      loadKey = (await adminCli(["account", "create", "--plan", "pro"])).apiKey;
      const source = await fixtures.source("tiny.mp4", { seconds: 1, width: 160, height: 90, fps: 15 });
      // Every 5xx with its method, path and text, so a failure says which layer answered it.
      const failures: string[] = [];
      const note = (what: string, answer: { status: number; text: string }) => {
        if (answer.status >= 500) failures.push(`${what}: ${answer.status} ${answer.text.slice(0, 300)}`);
      };
      await Promise.all(
        Array.from({ length: 50 }, async () => {
          const client = api(port, loadKey);
          const created = await client.createJob({ inputUrl: source, preset: "mp4_264_240p" });
          note("POST /jobs", created);
          if (created.status !== 201) return;
          createdByLoad.push(created.body.id);
          // A client polling every second, as long as its job runs: 100 requests a second from the
          // 50. Polling faster would take the cores from the encodes they wait on.
          await vi.waitFor(
            async () => {
              const [read, list] = await Promise.all([client.getJob(created.body.id), client.listJobs({ limit: 20 })]);
              note(`GET /jobs/${created.body.id}`, read);
              note("GET /jobs", list);
              if (read.status === 200 && !TERMINAL_STATUSES.includes(read.body.status))
                throw new Error(`job ${created.body.id} still ${read.body.status}`);
            },
            { timeout: 300_000, interval: 1000 },
          );
        }),
      );
      expect(failures).toEqual([]);
      expect(createdByLoad).toHaveLength(50);
      const listed = await allJobs(port, loadKey);
      expect(listed.map((j) => j.id).sort()).toEqual([...createdByLoad].sort());
      expect(listed.map((j) => j.status)).toEqual(Array(50).fill("completed"));
    } finally {
      ctrlC(dev.child);
      await dev.exited;
    }
    // One Ctrl-C, though the runner has it twice (from the terminal, and from npm passing it on): a whole stop, not "at once".
    expect(await dev.exited).toBe(0);
    expect(dev.output()).not.toMatch(/Stopping at once/);
    // The terminal's Ctrl-C reaches the embedded PostgreSQL too, which ends the Neon stand-in's idle connections: a stop, not an error.
    expect(dev.output().split("Stopping…")[1]).not.toMatch(/"level":"error"/);
    expect(await listening(port)).toBe(false);
    expect(workerOn(port)).toEqual([]);
    expect(processesMatching(`postgres -D ${join(dataDir, "postgres")}`)).toEqual([]);
    expect(await exists(join(dataDir, "in-use.json"))).toBe(false);
  }, 600_000);

  it("keeps its data across runs; DEV_PLAN=pro makes a pro account, whose printed timeline adds a title track; a Ctrl-C that finds it busy still stops it whole", async () => {
    const port = await freePort();
    const dev = startDev(port, { DEV_PLAN: "pro" });
    let runPid: number | undefined;
    try {
      const banner = await readyBanner(dev);
      runPid = JSON.parse(await readFile(join(dataDir, "in-use.json"), "utf8")).pid;
      // It reloads the Worker on a change (test/cloud/worker-watch.test.ts edits a copy of the project).
      expect(workerOn(port).filter((line) => line.includes(`worker-serve.mjs --port ${port} --watch`))).toHaveLength(1);
      expect(banner).toMatch(/\(pro plan/);
      const proKey = banner.match(/API key\s+(spk_\w+)/)![1];

      const validate = printedSequence(banner).filter((line) => line.startsWith("API=") || line.includes("-X PUT"));
      expect(validate).toHaveLength(2);
      const { stdout } = await paste(validate, dataDir);
      expect(JSON.parse(stdout)).toMatchObject({
        valid: true,
        stats: { tracks: 3 },
        plan: { current: "pro", canProcess: true },
      });

      // The same timeline is refused to the free account of the first run, which is still there with its jobs.
      const timelineFile = banner.match(/-d "@([^"]+)"/)![1];
      const timeline = JSON.parse(await readFile(timelineFile, "utf8"));
      expect(timeline.edl.timeline.tracks.map((t: { type: string }) => t.type)).toEqual(["video", "overlay", "text"]);
      const refused = bodyOf(await api(port, freeKey).validateEdl(unchecked(timeline)), 200);
      expect(refused).toMatchObject({ valid: false, plan: { current: "free", canProcess: false } });
      expect(refused.errors).toContain("Too many tracks for the Starter plan: 3 (maximum 2)");
      expect(bodyOf(await api(port, freeKey).listJobs(), 200).pagination.totalCount).toBe(FIRST_RUN_JOBS);
      expect((await allJobs(port, loadKey)).map((j) => j.id).sort()).toEqual([...createdByLoad].sort());
      expect(bodyOf(await api(port, proKey).listPresets(), 200).meta.userPlan).toBe("pro");
    } finally {
      if (runPid) await ctrlCWhileBusy(dev.child, runPid, new Promise((r) => setTimeout(r, 500)));
      else ctrlC(dev.child);
      await dev.exited;
    }
    // Its own shutdown ran to the end, however long the signal waited: nothing is left running.
    expect(dev.output()).toMatch(/Stopping…/);
    expect(dev.output().split("Stopping…")[1]).not.toMatch(/CRASHED|restart/);
    expect(await listening(port)).toBe(false);
    expect(workerOn(port)).toEqual([]);
    expect(processesMatching(`postgres -D ${join(dataDir, "postgres")}`)).toEqual([]);
    expect(await exists(join(dataDir, "in-use.json"))).toBe(false);
  });

  it("a run killed outright (SIGKILL) takes the Worker's workerd and the encoder with it; the next run on the same port takes over", async () => {
    const port = await freePort();
    const killed = startDev(port);
    await readyBanner(killed);
    const lock = JSON.parse(await readFile(join(dataDir, "in-use.json"), "utf8"));
    const held: { pid: number; group: boolean }[] = lock.processes;
    expect(held).toEqual([
      { pid: expect.any(Number), group: true, started: expect.any(String) },
      { pid: expect.any(Number), group: true, started: expect.any(String) },
    ]);
    expect(workerOn(port).length).toBeGreaterThan(0);
    // The run (the local cloud's process) and its encoder carry their V8 flags.
    const commandLine = async (pid: number) => (await readFile(`/proc/${pid}/cmdline`, "utf8")).split("\0");
    expect(await commandLine(lock.pid)).toEqual(expect.arrayContaining(CLOUD_NODE_FLAGS));
    const encoder = (await Promise.all(held.map((p) => commandLine(p.pid)))).find((args) =>
      args.includes("encoder/main.ts"),
    );
    expect(encoder).toEqual(expect.arrayContaining(ENCODER_NODE_FLAGS));
    process.kill(lock.pid, "SIGKILL");

    const gone = (p: { pid: number; group: boolean }) => {
      try {
        process.kill(p.group ? -p.pid : p.pid, 0);
        return false;
      } catch {
        return true;
      }
    };
    await waitFor(
      "its processes to end",
      () => (held.every(gone) && workerOn(port).length === 0 ? true : undefined),
      15_000,
    );
    expect(await listening(port)).toBe(false);
    await killed.exited; // npm, whose script's process was killed

    const next = startDev(port);
    try {
      const banner = await readyBanner(next);
      const key = banner.match(/API key\s+(spk_\w+)/)![1];
      expectStatus(await api(port, key).listJobs(), 200);
      expect(bodyOf(await api(port, freeKey).listJobs(), 200).pagination.totalCount).toBe(FIRST_RUN_JOBS);
    } finally {
      ctrlC(next.child);
      await next.exited;
    }
    expect(workerOn(port)).toEqual([]);
  });

  it("Ctrl-C while it is still starting leaves no workerd and no PostgreSQL behind", async () => {
    const port = await freePort();
    const dev = startDev(port);
    await waitFor("the Worker's server to be spawned", () => (workerOn(port).length > 0 ? true : undefined));
    ctrlC(dev.child);
    await dev.exited;
    expect(dev.output()).not.toMatch(/Ready\./);
    await waitFor("the Worker's server to be gone", () => (workerOn(port).length === 0 ? true : undefined), 10_000);
    expect(await listening(port)).toBe(false);
    expect(processesMatching(`postgres -D ${join(dataDir, "postgres")}`)).toEqual([]);
  });
});
