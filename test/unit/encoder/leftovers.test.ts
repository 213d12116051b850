import { spawn, type ChildProcess } from "node:child_process";
import { mkdir, mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { killRunningTools, runFfmpeg } from "../../../encoder/ffmpeg/run";
import { clearLeftovers, isWorkDirTool } from "../../../encoder/leftovers";

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
  "-hide_banner", "-nostdin", "-y", "-loglevel", "error",
  "-re", "-f", "lavfi", "-i", "testsrc=size=64x64:rate=5:duration=300",
  "-c:v", "mpeg2video", "-f", "mpegts", output,
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
  for (let i = 0; i < 100; i++) {
    if ((await readFile(`/proc/${child.pid}/cmdline`, "utf8").catch(() => "")).startsWith("ffmpeg")) return;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error("ffmpeg did not start");
}

describe("which processes are an encoder's leftovers", () => {
  it("FFmpeg or ffprobe with an argument in one of the WORK_DIR's job dirs", () => {
    const work = "/tmp/encoder";
    expect(isWorkDirTool(["ffmpeg", "-i", "/tmp/encoder/job-1-abc/source", "out"], work)).toBe(true);
    expect(isWorkDirTool(["/usr/bin/ffprobe", "-i", "/tmp/encoder/job-1-abc/asset-0"], work)).toBe(true);
    expect(isWorkDirTool(["ffmpeg", "-filter_complex", "drawtext=textfile='/tmp/encoder/job-2-x/text-1-0-0.txt'"], work)).toBe(true);
    expect(isWorkDirTool(["ffmpeg", "-i", "/tmp/encoder-other/job-1-abc/source"], work)).toBe(false);
    expect(isWorkDirTool(["ffmpeg", "-i", "/home/me/video.mp4"], work)).toBe(false);
    expect(isWorkDirTool(["vim", "/tmp/encoder/job-1-abc/source"], work)).toBe(false);
    expect(isWorkDirTool([""], work)).toBe(false);
  });
});

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
    const encoding = runFfmpeg(slowEncode(join(root, "running.ts"))).catch((e) => e);
    await new Promise((r) => setTimeout(r, 300));
    killRunningTools();
    const err = await encoding;
    expect(err).toMatchObject({ kind: "ffmpeg", retryable: true });
    expect(err.message).toMatch(/killed by SIGKILL/);
  });
});
