import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { mkdir, mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { killRunningTools, runFfmpeg } from "../../../encoder/ffmpeg/run";
import { clearLeftovers } from "../../../encoder/leftovers";

let root: string;
const started: ChildProcess[] = [];

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), "leftovers-"));
});
afterAll(async () => {
  for (const child of started) if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  await rm(root, { recursive: true, force: true });
});

/** FFmpeg encoding in real time for minutes, writing to `output`. */
const slowEncode = (output: string) => [
  "-hide_banner",
  "-nostdin",
  "-y",
  "-loglevel",
  "error",
  "-re",
  "-f",
  "lavfi",
  "-i",
  "testsrc=size=64x64:rate=5:duration=300",
  "-c:v",
  "mpeg2video",
  "-f",
  "mpegts",
  output,
];

function startFfmpeg(output: string): ChildProcess {
  const child = spawn("ffmpeg", slowEncode(output), { stdio: "ignore" });
  started.push(child);
  return child;
}

const exited = (child: ChildProcess) =>
  child.exitCode !== null || child.signalCode !== null
    ? Promise.resolve(child.signalCode)
    : new Promise<NodeJS.Signals | null>((resolve) => child.once("exit", (_code, signal) => resolve(signal)));

/** Until the process shows up in /proc with its arguments (a spawned child execs a moment later). */
async function running(child: ChildProcess) {
  await vi.waitFor(
    async () => expect(await readFile(`/proc/${child.pid}/cmdline`, "utf8").catch(() => "")).toMatch(/^ffmpeg/),
    { timeout: 2000, interval: 20 },
  );
}

/** Until an FFmpeg writing to `output` is running, whoever started it. */
async function writing(output: string) {
  const pids = () => execFileSync("pgrep", ["-f", `^ffmpeg .*${output}`], { encoding: "utf8" }).trim();
  await vi.waitFor(() => expect(pids()).not.toBe(""), { timeout: 10_000, interval: 20 });
}

describe.runIf(process.platform === "linux")("clearing leftovers at start", () => {
  it("SIGKILLs FFmpeg working in the WORK_DIR's job dirs, leaves other FFmpeg alone, and removes the job dirs", async () => {
    const workDir = join(root, "work");
    const jobDir = join(workDir, "job-1234-abc");
    await mkdir(jobDir, { recursive: true });
    const orphan = startFfmpeg(join(jobDir, "out.ts"));
    const bystander = startFfmpeg(join(root, "elsewhere.ts"));
    await Promise.all([running(orphan), running(bystander)]);

    const killed = await clearLeftovers(workDir);

    expect(killed).toEqual([orphan.pid]);
    expect(await exited(orphan)).toBe("SIGKILL");
    expect(bystander.exitCode).toBeNull();
    expect(bystander.signalCode).toBeNull();
    expect(await readdir(workDir)).toEqual([]);
    bystander.kill("SIGKILL");
  });

  it("a WORK_DIR that does not exist yet is created", async () => {
    const workDir = join(root, "fresh");
    expect(await clearLeftovers(workDir)).toEqual([]);
    expect(await readdir(workDir)).toEqual([]);
  });
});

describe("shutting down", () => {
  it("killRunningTools kills the FFmpeg this process is running", async () => {
    const output = join(root, "running.ts");
    const encoding = runFfmpeg(slowEncode(output)).catch((e) => e);
    await writing(output);
    killRunningTools();
    const err = await encoding;
    expect(err).toMatchObject({ kind: "ffmpeg", retryable: true });
    expect(err.message).toMatch(/killed by SIGKILL/);
  });
});
