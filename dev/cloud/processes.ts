import { execFile } from "node:child_process";
import { readFile } from "node:fs/promises";
import { promisify } from "node:util";

const run = promisify(execFile);

/**
 * When the process started, as an opaque string, or undefined when no such process runs.
 * A pid alone does not name a process for long: after a restart (a container's above all) the
 * pid a killed run wrote down is soon someone else's, so identity is the pair (pid, start).
 */
export async function processStartTime(pid: number): Promise<string | undefined> {
  if (!Number.isInteger(pid) || pid <= 0) return undefined;
  try {
    const stat = await readFile(`/proc/${pid}/stat`, "utf8");
    // Fields after the command name (which may hold spaces): state is the 3rd field, starttime the 22nd.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return fields[0] === "Z" ? undefined : fields[19];
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT" && process.platform === "linux") return undefined;
  }
  return psField(pid, "lstart");
}

/** The process's command line, or undefined when no such process runs. */
export async function processCommand(pid: number): Promise<string | undefined> {
  if (!Number.isInteger(pid) || pid <= 0) return undefined;
  try {
    return (await readFile(`/proc/${pid}/cmdline`, "utf8")).split("\0").join(" ").trim();
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT" && process.platform === "linux") return undefined;
  }
  return psField(pid, "command");
}

/** Where there is no /proc (macOS): ps, which exits non-zero for a pid that does not run. */
async function psField(pid: number, field: string): Promise<string | undefined> {
  try {
    const { stdout } = await run("ps", ["-o", `${field}=`, "-p", String(pid)]);
    return stdout.trim() || undefined;
  } catch {
    return undefined;
  }
}
