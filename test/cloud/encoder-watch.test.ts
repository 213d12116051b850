import { appendFile, cp, mkdir, mkdtemp, readFile, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { freePort } from "../../dev/cloud/free-port";
import { ENCODER_SOURCE_TREES, superviseEncoder, type SupervisedEncoder } from "../../dev/encoder-process";
import { PROJECT_ROOT } from "../../dev/state";

/**
 * `npm run dev` supervises the encoder with `watch` (dev/encoder-process.ts). Here it runs from a
 * copy of its sources, which the test edits as a developer would. Nothing calls it but the test:
 * its services' addresses are placeholders it reads only when a job comes.
 */
let project: string;
let encoder: SupervisedEncoder;
const lines: string[] = [];

beforeAll(async () => {
  project = await mkdtemp(join(tmpdir(), "encoder-watch-"));
  for (const entry of [...ENCODER_SOURCE_TREES, "package.json", "tsconfig.json"]) {
    await cp(join(PROJECT_ROOT, entry), join(project, entry), { recursive: true });
  }
  await symlink(join(PROJECT_ROOT, "node_modules"), join(project, "node_modules"));
  await mkdir(join(project, "work"));
  encoder = await superviseEncoder({
    port: await freePort(),
    projectRoot: project,
    watch: true,
    log: (source, line) => lines.push(`[${source}] ${line}`),
    env: {
      API_INTERNAL_URL: "http://127.0.0.1:9/",
      INTERNAL_SECRET: "a-secret-of-sixteen-or-more",
      QSTASH_CURRENT_SIGNING_KEY: "current",
      QSTASH_NEXT_SIGNING_KEY: "next",
      PUBLIC_URL: "https://encoder.example.com",
      S3_ENDPOINT: "http://127.0.0.1:9/",
      S3_BUCKET: "outputs",
      S3_ACCESS_KEY_ID: "key",
      S3_SECRET_ACCESS_KEY: "secret",
      WORK_DIR: join(project, "work"),
    },
  });
}, 60_000);
afterAll(async () => {
  await encoder?.stop();
  await rm(project, { recursive: true, force: true });
});

const edit = async (file: string, from: string, to: string) => {
  const path = join(project, file);
  const text = await readFile(path, "utf8");
  expect(text).toContain(from);
  await writeFile(path, text.replace(from, to));
};
const reloads = () =>
  lines.filter((line) => /^\[supervisor\] encoder reloaded in \d+ ms: pid \d+ is answering/.test(line)).length;
const answers = () => fetch(`${encoder.url}/healthz`).then((res) => res.status);
const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

describe("npm run dev's encoder supervisor, watching the encoder's sources", () => {
  it("restarts the encoder on an edit of encoder/ and of domain/, and the new process runs the edit", async () => {
    const first = encoder.pid();
    await edit("encoder/main.ts", 'msg: "encoder listening"', 'msg: "encoder listening, edited"');
    await vi.waitFor(() => expect(reloads()).toBe(1), { timeout: 30_000, interval: 100 });
    expect(lines.some((line) => line.includes('"msg":"encoder listening, edited"'))).toBe(true);
    expect(encoder.pid()).not.toBe(first);
    expect(alive(first)).toBe(false);
    expect(await answers()).toBe(200);

    const second = encoder.pid();
    await appendFile(join(project, "domain/jobs.ts"), "\n// edited while the encoder runs\n");
    await vi.waitFor(() => expect(reloads()).toBe(2), { timeout: 30_000, interval: 100 });
    expect(encoder.pid()).not.toBe(second);
    expect(encoder.crashes()).toEqual([]);
  }, 90_000);

  it("an edit that keeps it from starting is reported with its error and left until the next edit, which starts it", async () => {
    const before = reloads();
    await appendFile(join(project, "encoder/config.ts"), "\nexport const unfinished = ;\n");
    await vi.waitFor(
      () =>
        expect(lines.join("\n")).toMatch(
          /the encoder did not start after the change: pid \d+ exited with code 1[\s\S]*config\.ts[\s\S]*the next change starts it again/,
        ),
      {
        timeout: 30_000,
        interval: 100,
      },
    );
    await expect(answers()).rejects.toThrow();
    // Not restarted into the same error, and not counted as a crash.
    expect(lines.join("\n")).not.toContain("ENCODER CRASHED");
    expect(encoder.crashes()).toEqual([]);

    await edit("encoder/config.ts", "\nexport const unfinished = ;\n", "");
    await vi.waitFor(() => expect(reloads()).toBe(before + 1), { timeout: 30_000, interval: 100 });
    expect(await answers()).toBe(200);
  }, 90_000);

  it("a crash after a reload is still restarted as a crash", async () => {
    const pid = encoder.pid();
    process.kill(pid, "SIGKILL");
    await encoder.readyAfter(pid);
    expect(encoder.crashes()).toMatchObject([{ pid, signal: "SIGKILL" }]);
    expect(await answers()).toBe(200);
  }, 60_000);
});
