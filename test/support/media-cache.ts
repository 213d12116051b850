import { execFile } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import { constants } from "node:fs";
import { copyFile, mkdir, rename, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { extname, join } from "node:path";
import { promisify } from "node:util";

const run = promisify(execFile);

/**
 * Generated media, kept under the OS temp dir by what made it: the files of one run and of the
 * runs after it that need the same source share one encode of it. `TEST_MEDIA_CACHE` names
 * another directory (an empty one makes every source afresh).
 */
const MEDIA_CACHE = process.env.TEST_MEDIA_CACHE ?? join(tmpdir(), "vep-test-media");

let ffmpegVersion: Promise<string> | undefined;
/** FFmpeg's banner line: another build of FFmpeg makes its own copies. */
const versionOfFfmpeg = () => {
  ffmpegVersion ??= run("ffmpeg", ["-version"]).then(({ stdout }) => stdout.split("\n", 1)[0]);
  return ffmpegVersion;
};

const exists = (path: string) =>
  stat(path).then(
    (info) => info.isFile() && info.size > 0,
    () => false,
  );

/**
 * The path of the file `make` writes for `key` (everything that decides its bytes: the generating
 * parameters, any input's content), made once: a maker writes a draft and renames it into place,
 * so a file found there is whole, and two files making the same one at once both end with it.
 * The file is shared: read it, or take a copy of one's own (`madeOnce`) to change.
 */
export async function cachedMedia(key: unknown, ext: string, make: (path: string) => Promise<void>): Promise<string> {
  const hash = createHash("sha256")
    .update(JSON.stringify({ key, ffmpeg: await versionOfFfmpeg() }))
    .digest("hex")
    .slice(0, 32);
  const path = join(MEDIA_CACHE, `${hash}${ext}`);
  if (await exists(path)) return path;
  await mkdir(MEDIA_CACHE, { recursive: true });
  // The draft keeps the extension: FFmpeg picks the container by it.
  const draft = join(MEDIA_CACHE, `${hash}.draft-${randomBytes(6).toString("hex")}${ext}`);
  try {
    await make(draft);
    await rename(draft, path);
  } finally {
    await rm(draft, { force: true });
  }
  return path;
}

/**
 * `cachedMedia` for a file wanted at `path`, with `path`'s extension: copied there (a clone where
 * the file system makes one), the caller's own to change.
 */
export async function madeOnce(path: string, key: unknown, make: (path: string) => Promise<void>): Promise<void> {
  await copyFile(await cachedMedia(key, extname(path), make), path, constants.COPYFILE_FICLONE);
}
