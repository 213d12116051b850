import { execFile, execFileSync, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { access, chmod, mkdtemp, readdir, readFile, readlink, rename, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { startLocalCloud } from "../../dev/cloud";
import { DataDirInUse, lockDataDir } from "../../dev/cloud/data-dir-lock";
import { canReach, reachableBinaries, SHARED_DIR, serverUser } from "../../dev/cloud/postgres-as-root";
import { binariesUnder, installedBinaries } from "../../dev/cloud/postgres-binaries";
import { processStartTime } from "../../dev/cloud/processes";
import { PROJECT_ROOT } from "../../dev/state";

const run = promisify(execFile);

/**
 * The embedded PostgreSQL of `npm run dev`, through startLocalCloud as the dev runner uses it:
 * one data directory, taken by one process at a time, kept across restarts.
 */
let dataDir: string;
beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), "embedded-pg-"));
  await chmod(dataDir, 0o755); // as root, the server runs as the user postgres
});
afterAll(() => rm(dataDir, { recursive: true, force: true }));

async function query(databaseUrl: string, sql: string) {
  const client = new pg.Client(databaseUrl);
  await client.connect();
  try {
    return (await client.query(sql)).rows;
  } finally {
    await client.end();
  }
}

const postmasterPid = async () =>
  Number((await readFile(join(dataDir, "postgres", "postmaster.pid"), "utf8")).split("\n")[0]);
const running = (pid: number) => processStartTime(pid).then((started) => started !== undefined);
const exists = (path: string) =>
  access(path).then(
    () => true,
    () => false,
  );

/** A process that has come and gone: its pid names nothing now. */
async function deadPid(): Promise<number> {
  const child = spawn("true");
  await new Promise((resolve) => child.once("exit", resolve));
  return child.pid!;
}

describe("the embedded PostgreSQL under a data directory", () => {
  it("is created on first start and keeps its data across a restart; stop() ends the server and releases the directory", async () => {
    const first = await startLocalCloud({ dataDir });
    expect(await exists(join(dataDir, "postgres", "PG_VERSION"))).toBe(true);
    await query(first.databaseUrl, "create table kept (note text); insert into kept values ('from the first run')");
    const pid = await postmasterPid();
    await first.stop();
    expect(await running(pid)).toBe(false);
    expect(await exists(join(dataDir, "postgres", "postmaster.pid"))).toBe(false);
    expect(await exists(join(dataDir, "in-use.json"))).toBe(false);

    const second = await startLocalCloud({ dataDir });
    try {
      expect(await query(second.databaseUrl, "select note from kept")).toEqual([{ note: "from the first run" }]);
    } finally {
      await second.stop();
    }
  });

  it("stop() waits for the server process itself, not its lock file, which goes a moment before the process does", async () => {
    const cloud = await startLocalCloud({ dataDir });
    const pid = await postmasterPid();
    // The state a terminal's Ctrl-C can leave for stop() to find: the server, signalled too, has
    // removed its lock file and not yet exited.
    const lockFile = join(dataDir, "postgres", "postmaster.pid");
    await rename(lockFile, `${lockFile}.aside`);
    try {
      await cloud.stop();
      expect(await running(pid)).toBe(false);
    } finally {
      if (await running(pid)) process.kill(pid, "SIGINT");
      await vi.waitFor(async () => expect(await running(pid)).toBe(false), { timeout: 30_000, interval: 100 });
      await rm(`${lockFile}.aside`, { force: true });
    }
  });

  it("a second taker is refused, told who holds it, and nothing of its own is left running", async () => {
    const holder = await startLocalCloud({ dataDir, owner: { api: "http://127.0.0.1:8787" } });
    try {
      const pid = await postmasterPid();
      const refused = await startLocalCloud({ dataDir }).then(
        () => undefined,
        (err: unknown) => err,
      );
      expect(refused).toBeInstanceOf(DataDirInUse);
      expect((refused as DataDirInUse).holder).toMatchObject({
        pid: process.pid,
        about: { api: "http://127.0.0.1:8787" },
      });
      // The holder's server was not touched.
      expect(await postmasterPid()).toBe(pid);
      expect(await query(holder.databaseUrl, "select count(*)::int as n from kept")).toEqual([{ n: 1 }]);
    } finally {
      await holder.stop();
    }
  });

  it("a lock whose process is gone is taken over, and so is one whose pid now names another process", async () => {
    for (const stale of [
      { pid: await deadPid(), started: "1" },
      { pid: process.pid, started: "not when this process started" },
    ]) {
      await writeFile(join(dataDir, "in-use.json"), JSON.stringify({ ...stale, about: {} }));
      const lock = await lockDataDir(dataDir);
      expect(JSON.parse(await readFile(join(dataDir, "in-use.json"), "utf8"))).toMatchObject({
        pid: process.pid,
        started: await processStartTime(process.pid),
      });
      await lock.release();
    }
  });

  it("a record of its processes still being written when the lock is released does not put the lock back", async () => {
    const lock = await lockDataDir(dataDir);
    // As the dev runner's supervisor records a restarted encoder: not awaited.
    const recording = lock.hold([{ pid: process.pid, group: false }]);
    await lock.release();
    await recording;
    await lock.hold([{ pid: process.pid, group: false }]);
    expect(await exists(join(dataDir, "in-use.json"))).toBe(false);
  });

  it("a lock taken over stops the processes its killed holder recorded, and no process whose pid has since been reused", async () => {
    // What a killed `npm run dev` can leave: a process group of its own (wrangler's) and a process (the encoder).
    const group = spawn("sh", ["-c", "sleep 300 & sleep 300"], { detached: true, stdio: "ignore" });
    const single = spawn("sleep", ["300"], { stdio: "ignore" });
    const ended = (child: typeof single) => new Promise((resolve) => child.once("exit", resolve));
    const [groupEnded, singleEnded] = [ended(group), ended(single)];
    const record = async (pid: number, group: boolean) => ({ pid, group, started: (await processStartTime(pid))! });
    await writeFile(
      join(dataDir, "in-use.json"),
      JSON.stringify({
        pid: await deadPid(),
        started: "1",
        about: {},
        processes: [
          await record(group.pid!, true),
          await record(single.pid!, false),
          { pid: process.pid, group: false, started: "another process's start" },
        ],
      }),
    );
    const groupMembers = () =>
      execFileSync("pgrep", ["-g", String(group.pid)], { encoding: "utf8" })
        .split("\n")
        .filter(Boolean);
    await vi.waitFor(() => expect(groupMembers()).toHaveLength(3));

    const lock = await lockDataDir(dataDir);
    await lock.release();
    await Promise.all([groupEnded, singleEnded]);
    expect(() => groupMembers()).toThrow(); // pgrep finds nothing: the background sleep went with the group
    expect(await running(process.pid)).toBe(true);
  });

  it("after its owner is killed (SIGKILL), the next start stops the server it left running and serves the same data", async () => {
    const owner = spawn(
      process.execPath,
      [
        "--import",
        "tsx",
        "--input-type=module",
        "-e",
        `const { startLocalCloud } = await import(${JSON.stringify(join(PROJECT_ROOT, "dev/cloud/index.ts"))});
         await startLocalCloud({ dataDir: ${JSON.stringify(dataDir)} });
         console.log("started");`,
      ],
      { cwd: PROJECT_ROOT, stdio: ["ignore", "pipe", "inherit"] },
    );
    await new Promise<void>((resolve, reject) => {
      owner.stdout!.on("data", (d) => String(d).includes("started") && resolve());
      owner.once("exit", (code) => reject(new Error(`the owner exited early (${code})`)));
    });
    const leftBehind = await postmasterPid();
    owner.kill("SIGKILL");
    await new Promise((resolve) => owner.once("exit", resolve));
    expect(await running(leftBehind)).toBe(true);

    const next = await startLocalCloud({ dataDir });
    try {
      expect(await running(leftBehind)).toBe(false);
      expect(await postmasterPid()).not.toBe(leftBehind);
      expect(await query(next.databaseUrl, "select note from kept")).toEqual([{ note: "from the first run" }]);
    } finally {
      await next.stop();
    }
  });

  it("a first start killed while initdb runs leaves nothing that stops the next from creating the cluster", async () => {
    const fresh = await mkdtemp(join(tmpdir(), "embedded-pg-initdb-"));
    await chmod(fresh, 0o755);
    const pgDir = join(fresh, "postgres");
    try {
      const first = spawn(
        process.execPath,
        [
          "--import",
          "tsx",
          "--input-type=module",
          "-e",
          `const { startEmbeddedPostgres } = await import(${JSON.stringify(join(PROJECT_ROOT, "dev/cloud/embedded-postgres.ts"))});
           await startEmbeddedPostgres({ dataDir: ${JSON.stringify(pgDir)}, host: "127.0.0.1" });`,
        ],
        { cwd: PROJECT_ROOT, stdio: "ignore", detached: true },
      );
      // Killed with its initdb (its process group), as a closed terminal or kill -9 of the group
      // would, once initdb has written PG_VERSION (its first file) and before it has finished.
      const begun = async () =>
        (await exists(join(pgDir, "PG_VERSION"))) || (await exists(join(`${pgDir}.initdb`, "PG_VERSION")));
      await vi.waitFor(async () => expect(await begun()).toBe(true), { timeout: 30_000, interval: 10 });
      expect(processesMatching(`initdb.*${fresh}`)).not.toEqual([]);
      process.kill(-first.pid!, "SIGKILL");
      await vi.waitFor(() => expect(processesMatching(`initdb.*${fresh}`)).toEqual([]), {
        timeout: 10_000,
        interval: 50,
      });

      const next = await startLocalCloud({ dataDir: fresh });
      try {
        expect(await query(next.databaseUrl, "select 1 as one")).toEqual([{ one: 1 }]);
        expect(await exists(`${pgDir}.initdb`)).toBe(false);
      } finally {
        await next.stop();
      }
    } finally {
      await rm(fresh, { recursive: true, force: true });
    }
  });
});

/**
 * As root, PostgreSQL runs as the user postgres, who cannot reach a private folder (mode 0700, as
 * `mktemp -d` makes one, and as /root is): a checkout's node_modules or a DATA_DIR there.
 */
describe("the embedded PostgreSQL with its data or its build in a private folder", () => {
  const asRoot = process.getuid?.() === 0;

  it("a data directory in a private folder works, keeps its data across a restart, and starts afresh once deleted", async () => {
    const privateFolder = await mkdtemp(join(tmpdir(), "embedded-pg-private-"));
    const dataDir = join(privateFolder, "data");
    const pointer = join(dataDir, "postgres");
    let kept: string | undefined;
    try {
      const first = await startLocalCloud({ dataDir });
      try {
        kept = first.postgresDataDir;
        await query(first.databaseUrl, "create table kept (note text); insert into kept values ('from the first run')");
      } finally {
        await first.stop();
      }
      if (asRoot) {
        // Where the user postgres can reach it, and found from the data directory through a link.
        expect(kept?.startsWith(`${SHARED_DIR}/data/`)).toBe(true);
        expect(await readlink(pointer)).toBe(kept);
      } else {
        expect(kept).toBe(pointer);
      }
      expect(processesMatching(`postgres -D ${kept}`)).toEqual([]);

      const second = await startLocalCloud({ dataDir });
      try {
        expect(second.postgresDataDir).toBe(kept);
        expect(await query(second.databaseUrl, "select note from kept")).toEqual([{ note: "from the first run" }]);
      } finally {
        await second.stop();
      }

      // As a person starts afresh: the data directory deleted.
      await rm(dataDir, { recursive: true, force: true });
      const fresh = await startLocalCloud({ dataDir });
      try {
        expect(await query(fresh.databaseUrl, "select to_regclass('kept') as kept")).toEqual([{ kept: null }]);
      } finally {
        await fresh.stop();
      }
    } finally {
      await rm(privateFolder, { recursive: true, force: true });
      if (kept?.startsWith(SHARED_DIR)) await rm(kept, { recursive: true, force: true });
    }
  });

  it("a temporary cluster in a private temporary folder (TMPDIR) leaves nothing behind once stopped", async () => {
    const privateTmp = await mkdtemp(join(tmpdir(), "embedded-pg-tmpdir-"));
    const tmpdirBefore = process.env.TMPDIR;
    process.env.TMPDIR = privateTmp;
    let kept: string | undefined;
    try {
      const cloud = await startLocalCloud();
      try {
        kept = cloud.postgresDataDir;
        expect(await query(cloud.databaseUrl, "select 1 as one")).toEqual([{ one: 1 }]);
      } finally {
        await cloud.stop();
      }
      if (asRoot) expect(kept?.startsWith(`${SHARED_DIR}/data/`)).toBe(true);
      expect(await exists(kept ?? "")).toBe(false);
      expect(await readdir(privateTmp)).toEqual([]);
    } finally {
      if (tmpdirBefore === undefined) delete process.env.TMPDIR;
      else process.env.TMPDIR = tmpdirBefore;
      await rm(privateTmp, { recursive: true, force: true });
      if (kept?.startsWith(SHARED_DIR)) await rm(kept, { recursive: true, force: true });
    }
  });

  it("a PostgreSQL build in a private folder is copied, once, where the user postgres can run it", async () => {
    const user = await serverUser();
    if (!asRoot) {
      // Not root: the server runs as this process's user, who reaches its own node_modules.
      expect(user).toBeUndefined();
      return;
    }
    if (!user) throw new Error("as root, the server must have a user to run as");
    const installed = await installedBinaries();
    // The checkout's node_modules, reachable here, is left as it is.
    expect(await reachableBinaries(user, installed)).toBe(installed);

    const privateFolder = await mkdtemp(join(tmpdir(), "embedded-pg-build-"));
    const build = `test-${randomBytes(6).toString("hex")}`;
    try {
      await run("cp", ["-al", installed.root, join(privateFolder, "native")]);
      const unreachable = binariesUnder(join(privateFolder, "native"), build);
      expect(await canReach(user, unreachable.initdb)).toBe(false);
      // Two runs starting at once make one copy between them.
      const [copy, again] = await Promise.all([
        reachableBinaries(user, unreachable),
        reachableBinaries(user, unreachable),
      ]);
      expect(copy.root).toBe(join(SHARED_DIR, "postgres", build));
      expect(again).toEqual(copy);
      expect((await readdir(join(SHARED_DIR, "postgres"))).filter((name) => name.startsWith(build))).toEqual([build]);
      const { stdout } = await run(copy.postgres, ["--version"], { uid: user.uid, gid: user.gid, cwd: "/" });
      expect(stdout).toMatch(/^postgres \(PostgreSQL\) \d+/);
    } finally {
      await rm(privateFolder, { recursive: true, force: true });
      await rm(join(SHARED_DIR, "postgres", build), { recursive: true, force: true });
    }
  });
});

function processesMatching(pattern: string): string[] {
  try {
    return execFileSync("pgrep", ["-af", pattern], { encoding: "utf8" }).split("\n").filter(Boolean);
  } catch {
    return []; // pgrep exits 1 when nothing matches
  }
}
