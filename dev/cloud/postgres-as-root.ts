import { execFile } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import { access, chmod, cp, mkdir, readlink, rename, rm, symlink } from "node:fs/promises";
import { dirname, join, resolve } from "node:path";
import { promisify } from "node:util";
import { binariesUnder, type PostgresBinaries } from "./postgres-binaries";
import { PostgresNotStarted } from "./postgres-not-started";
import { runningPostmaster, stopPostmaster } from "./postmaster";

/**
 * PostgreSQL refuses to run as root; started by root, it runs as the user `postgres`, who must
 * reach its programs and its data. A checkout in a private folder (mode 0700, or under /root)
 * holds both out of that user's reach: what it cannot reach in place is kept under SHARED_DIR.
 */

const run = promisify(execFile);

export interface ServerUser {
  uid: number;
  gid: number;
}

const SERVER_USER = "postgres";

/** Every user can traverse it, and unlike /tmp it outlives a restart, as a database must. */
export const SHARED_DIR = "/var/lib/vep-dev";

/** What to do about a server that cannot run as the user postgres, for the end of a message. */
const INSTEAD =
  "Run npm run dev as a user other than root, or from a checkout (and DATA_DIR) every user can traverse (chmod o+x on each folder above it).";

/** The user the server runs as: undefined when this process is not root (it runs as this process's). */
export async function serverUser(): Promise<ServerUser | undefined> {
  if (process.getuid?.() !== 0) return undefined;
  const found = await idsOf(SERVER_USER);
  if (found) return found;
  // groupadd fails when the group alone exists, which useradd -g then takes.
  await run("groupadd", [SERVER_USER]).catch(() => undefined);
  const made = await run("useradd", ["-g", SERVER_USER, SERVER_USER]).then(
    () => idsOf(SERVER_USER),
    (err: Error) => {
      throw new PostgresNotStarted(
        `PostgreSQL refuses to run as root, and the user ${SERVER_USER} to run it as could not be made (${err.message.trim()}). Make that user, or run npm run dev as a user other than root.`,
      );
    },
  );
  if (!made) throw new PostgresNotStarted(`The user ${SERVER_USER} was made, and is not found. ${INSTEAD}`);
  return made;
}

async function idsOf(name: string): Promise<ServerUser | undefined> {
  try {
    const [uid, gid] = await Promise.all([run("id", ["-u", name]), run("id", ["-g", name])]);
    return { uid: Number(uid.stdout), gid: Number(gid.stdout) };
  } catch {
    return undefined;
  }
}

/**
 * Whether `user` can enter every folder on the way to `path` and execute (or enter) `path`,
 * asked of the system as that user, so that ACLs and group memberships count.
 */
export async function canReach(user: ServerUser, path: string): Promise<boolean> {
  return run("test", ["-x", path], { uid: user.uid, gid: user.gid, cwd: "/" }).then(
    () => true,
    () => false,
  );
}

async function sharedDir(sub: string): Promise<string> {
  const dir = join(SHARED_DIR, sub);
  await mkdir(dir, { recursive: true });
  // Whatever the umask made of them.
  await chmod(SHARED_DIR, 0o755);
  await chmod(dir, 0o755);
  return dir;
}

/**
 * The build where `user` can run it: as installed, or a copy under SHARED_DIR, one per build,
 * shared by every checkout. The copy is made under another name and renamed into place, so that
 * one cut short is never taken for a build.
 */
export async function reachableBinaries(user: ServerUser, installed: PostgresBinaries): Promise<PostgresBinaries> {
  if (await canReach(user, installed.initdb)) return installed;
  const copy = binariesUnder(join(SHARED_DIR, "postgres", installed.build), installed.build);
  if (await canReach(user, copy.initdb)) return copy;
  const cannot = `PostgreSQL runs as the user ${SERVER_USER} (it refuses root), who cannot reach ${installed.root}`;
  const draft = `${copy.root}.${randomBytes(6).toString("hex")}`;
  try {
    await sharedDir("postgres");
    await cp(installed.root, draft, { recursive: true, verbatimSymlinks: true });
    // Another run's copy may have been renamed into place first: either will do.
    await rename(draft, copy.root).catch(() => undefined);
  } catch (err) {
    throw new PostgresNotStarted(`${cannot}; a copy in ${SHARED_DIR} failed: ${(err as Error).message}. ${INSTEAD}`);
  } finally {
    await rm(draft, { recursive: true, force: true });
  }
  if (!(await canReach(user, copy.initdb))) throw new PostgresNotStarted(`${cannot}, nor ${copy.root}. ${INSTEAD}`);
  return copy;
}

/**
 * Where the cluster DATA_DIR/postgres (`pointer`) names lives: `pointer` itself where `user` can
 * reach its folder; else a directory under SHARED_DIR, keyed by `pointer`, which `pointer` is
 * made a link to. The data is still found through DATA_DIR; deleting DATA_DIR (how a person
 * starts afresh) deletes the link, and the next start, finding none, deletes what was kept for
 * that path and begins anew.
 */
export async function reachableDataDir(user: ServerUser, pointer: string): Promise<string> {
  const linked = await readlink(pointer).catch(() => undefined);
  if (linked !== undefined) return resolve(dirname(pointer), linked);
  await mkdir(dirname(pointer), { recursive: true });
  if (await canReach(user, dirname(pointer))) return pointer;
  if (await exists(join(pointer, "PG_VERSION")))
    throw new PostgresNotStarted(
      `${pointer} holds a database that the user ${SERVER_USER}, whom PostgreSQL runs as under root, cannot reach. Make each folder above it traversable (chmod o+x), or move it out of the way to start afresh.`,
    );
  const kept = join(SHARED_DIR, "data", createHash("sha256").update(pointer).digest("hex").slice(0, 16));
  try {
    await sharedDir("data");
    await stopPostmaster(await runningPostmaster(kept));
    for (const leftover of [kept, `${kept}.initdb`, pointer, `${pointer}.initdb`])
      await rm(leftover, { recursive: true, force: true });
    await symlink(kept, pointer);
  } catch (err) {
    throw new PostgresNotStarted(
      `PostgreSQL runs as the user ${SERVER_USER} (it refuses root), who cannot reach ${dirname(pointer)}; a data directory in ${SHARED_DIR} failed: ${(err as Error).message}. ${INSTEAD}`,
    );
  }
  return kept;
}

async function exists(path: string): Promise<boolean> {
  return access(path).then(
    () => true,
    () => false,
  );
}
