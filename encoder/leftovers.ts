import { mkdir, readdir, readFile, rm } from "node:fs/promises";
import { basename, join } from "node:path";

const TOOLS = new Set(["ffmpeg", "ffprobe"]);

/**
 * Whether a command line is FFmpeg or ffprobe working in a job dir of `workDir`. Every path the
 * encoder hands them is under `join(workDir, "job-…")`, built the same way as here.
 */
export function isWorkDirTool(argv: string[], workDir: string): boolean {
  if (!TOOLS.has(basename(argv[0] ?? ""))) return false;
  const jobDirs = join(workDir, "job-");
  return argv.slice(1).some((arg) => arg.includes(jobDirs));
}

/**
 * SIGKILLs FFmpeg and ffprobe processes working in `workDir`'s job dirs. At start, those were
 * left by an encoder that died without killing them (SIGKILL gives it no chance) and would burn
 * CPU for jobs QStash or the sweep hands out again. Only one encoder uses a WORK_DIR. Reads
 * Linux's /proc; where there is none, there is nothing to do.
 */
async function killOrphanedTools(workDir: string, procDir = "/proc"): Promise<number[]> {
  const entries = await readdir(procDir).catch(() => [] as string[]);
  const killed: number[] = [];
  for (const entry of entries) {
    const pid = Number(entry);
    if (!Number.isInteger(pid) || pid === process.pid) continue;
    // A process can exit between the listing and the read.
    const cmdline = await readFile(join(procDir, entry, "cmdline"), "utf8").catch(() => "");
    if (!isWorkDirTool(cmdline.split("\0"), workDir)) continue;
    try {
      process.kill(pid, "SIGKILL");
      killed.push(pid);
    } catch {
      // Gone already, or not ours to signal.
    }
  }
  return killed;
}

/**
 * What a process that died mid-job left behind: its FFmpeg processes, then its work dirs. Their
 * jobs are retried by QStash or the sweep.
 */
export async function clearLeftovers(workDir: string): Promise<number[]> {
  const killed = await killOrphanedTools(workDir);
  await mkdir(workDir, { recursive: true });
  for (const entry of await readdir(workDir)) {
    if (entry.startsWith("job-")) await rm(join(workDir, entry), { recursive: true, force: true });
  }
  return killed;
}
