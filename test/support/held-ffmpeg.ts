import { execFile } from "node:child_process";
import { mkdtemp, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { promisify } from "node:util";

/**
 * A directory to put first on PATH whose `ffmpeg` holds one run: the one whose arguments contain
 * `matching` writes its pid to `pidFile` and waits a minute (a signal ends it at once); every
 * other run is the real FFmpeg's. For a test that needs one encode to be under way, and stay so,
 * until something it checks has happened. `deaf`: the held run ignores SIGTERM and SIGINT too, as
 * an FFmpeg stuck in a write would, and only a SIGKILL (or its minute) ends it.
 */
export async function heldFfmpeg(parent: string, matching: string, { deaf = false } = {}) {
  const bin = await mkdtemp(join(parent, "held-ffmpeg-"));
  const pidFile = join(bin, "held.pid");
  const ffmpeg = (await promisify(execFile)("sh", ["-c", "command -v ffmpeg"])).stdout.trim();
  await writeFile(
    join(bin, "ffmpeg"),
    `#!/bin/sh\ncase "$*" in *${matching}*) ${deaf ? "trap '' TERM INT; " : ""}echo $$ > ${pidFile}; exec sleep 60;; esac\nexec ${ffmpeg} "$@"\n`,
    { mode: 0o755 },
  );
  return {
    /** PATH with the held `ffmpeg` first. */
    path: `${bin}:${process.env.PATH}`,
    pidFile,
    /** The held run's pid, once it has begun. */
    pid: async () => Number(await readFile(pidFile, "utf8")),
  };
}

/** Whether a process is still there. */
export function running(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
