/**
 * The commit-msg hook as `npm install` sets it up: package.json's prepare script, run as npm runs
 * it (`sh -c`) in a temporary repository holding a copy of .githooks, then real `git commit`s there.
 */
import { type SpawnSyncOptions, spawnSync } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, describe, expect, it } from "vitest";

const ROOT = resolve(import.meta.dirname, "../../..");
const PREPARE: string = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")).scripts.prepare;
const work = mkdtempSync(join(tmpdir(), "commit-hook-"));
afterAll(() => rmSync(work, { recursive: true, force: true }));

/** This process's environment without git's own variables (a test run from a hook has them) or the user's config. */
const ENV = {
  ...Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith("GIT_"))),
  GIT_CONFIG_GLOBAL: "/dev/null",
  GIT_CONFIG_NOSYSTEM: "1",
  GIT_AUTHOR_NAME: "Test",
  GIT_AUTHOR_EMAIL: "test@example.com",
  GIT_COMMITTER_NAME: "Test",
  GIT_COMMITTER_EMAIL: "test@example.com",
};

function run(command: string, args: string[], options: SpawnSyncOptions & { cwd: string }) {
  const done = spawnSync(command, args, { env: ENV, encoding: "utf8", ...options });
  if (done.error) throw done.error;
  return { code: done.status, stdout: String(done.stdout), stderr: String(done.stderr) };
}

/** A directory under the work dir; with `hooks`, a copy of the project's .githooks in it; with `repository`, `git init`. */
function directory(name: string, { hooks = true, repository = true } = {}) {
  const dir = join(work, name);
  mkdirSync(dir, { recursive: true });
  if (hooks) cpSync(join(ROOT, ".githooks"), join(dir, ".githooks"), { recursive: true });
  if (repository) expect(run("git", ["init", "-q"], { cwd: dir }).code).toBe(0);
  return dir;
}

const prepare = (cwd: string, env: NodeJS.ProcessEnv = ENV) => run("/bin/sh", ["-c", PREPARE], { cwd, env });
const hooksPath = (cwd: string) => run("git", ["config", "core.hooksPath"], { cwd }).stdout.trim();

describe("the commit-msg hook, installed by npm's prepare script", () => {
  const repo = directory("checkout");

  it("is installed: core.hooksPath names the committed folder", () => {
    expect(prepare(repo)).toMatchObject({ code: 0, stderr: "" });
    expect(hooksPath(repo)).toBe(".githooks");
  });

  it("refuses a commit whose subject breaks the convention, saying why, and makes no commit", () => {
    const refused = run("git", ["commit", "--allow-empty", "-q", "-m", "Fixed the sweep."], { cwd: repo });
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain("commit-msg: this message does not follow the convention");
    expect(refused.stderr).toContain('"Fixed the sweep."');
    expect(refused.stderr).toContain("The subject does not start with its area");
    expect(refused.stderr).toContain("The subject ends in a period.");
    expect(run("git", ["rev-list", "--all", "--count"], { cwd: repo }).stdout.trim()).toBe("0");
  });

  it("accepts one that follows it, with its body", () => {
    const message = "sweep: settle a job whose message QStash dropped\n\nWhat and why.";
    const accepted = run("git", ["commit", "--allow-empty", "-q", "-F", "-"], { cwd: repo, input: message });
    expect(accepted).toMatchObject({ code: 0, stderr: "" });
    expect(run("git", ["log", "-1", "--format=%B"], { cwd: repo }).stdout.trim()).toBe(message);
  });
});

describe("the prepare script where there is nothing to install into", () => {
  it("outside a git work tree: succeeds and sets nothing", () => {
    const dir = directory("unpacked", { repository: false });
    expect(prepare(dir)).toMatchObject({ code: 0, stderr: "" });
  });

  it("inside another project's repository: leaves that repository's hooks alone", () => {
    const outer = directory("outer", { hooks: false });
    const inner = join(outer, "node_modules/video-encoding-platform");
    mkdirSync(inner, { recursive: true });
    cpSync(join(ROOT, ".githooks"), join(inner, ".githooks"), { recursive: true });
    expect(prepare(inner)).toMatchObject({ code: 0, stderr: "" });
    expect(hooksPath(outer)).toBe("");
  });

  it("without git on the PATH: succeeds and sets nothing", () => {
    const repo = directory("no-git");
    const bin = join(work, "node-only");
    mkdirSync(bin);
    symlinkSync(process.execPath, join(bin, "node"));
    expect(prepare(repo, { ...ENV, PATH: bin })).toMatchObject({ code: 0, stderr: "" });
    expect(hooksPath(repo)).toBe("");
  });

  it("without the hook folder, as in the encoder's image (package.json copied alone): succeeds", () => {
    const dir = directory("image", { hooks: false, repository: false });
    writeFileSync(join(dir, "package.json"), readFileSync(join(ROOT, "package.json")));
    expect(prepare(dir)).toMatchObject({ code: 0, stderr: "" });
  });
});
