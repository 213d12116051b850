import { existsSync } from "node:fs";
import { chmod, mkdir, mkdtemp, readFile, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { resolveFont } from "../../../encoder/timeline/fonts";

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "fonts-"));
});
afterAll(() => rm(dir, { recursive: true, force: true }));

describe("resolveFont through fontconfig", () => {
  it.each(["sans-serif", "serif", "monospace", "Sans-Serif"])(
    "the generic family %s resolves to a font file",
    async (family) => {
      expect((await stat(await resolveFont(family, "normal"))).isFile()).toBe(true);
    },
  );

  it("named families and fontconfig's aliases resolve; bold picks the bold face", async () => {
    expect(await resolveFont("DejaVu Sans", "normal")).toMatch(/DejaVuSans\.ttf$/);
    expect(await resolveFont("Arial", "normal")).toMatch(/LiberationSans-Regular\.ttf$/);
    expect(await resolveFont("Arial", "bold")).toMatch(/LiberationSans-Bold\.ttf$/);
  });

  it("a family fontconfig does not know fails the job naming it, not retried", async () => {
    const failure = await resolveFont("No Such Family 123", "normal").catch((e) => e);
    expect(failure).toMatchObject({ kind: "invalid-timeline", retryable: false });
    expect(failure.message).toMatch(/^Font family "No Such Family 123" is not available/);
  });
});

describe("when fc-match cannot answer", () => {
  /** Runs `fn` with PATH holding only `bin`, so fc-match is whatever is there, or nothing. */
  async function withPath<T>(bin: string, fn: () => Promise<T>): Promise<T> {
    const saved = process.env.PATH;
    process.env.PATH = bin;
    try {
      return await fn();
    } finally {
      process.env.PATH = saved;
    }
  }

  const expectClearFailure = (err: unknown) => {
    expect(err).toMatchObject({ kind: "encoder-setup", retryable: false });
    expect((err as Error).message).toBe(
      "Text cannot be drawn: the encoder could not look up fonts (fontconfig's fc-match is missing or failed).",
    );
  };

  it("fc-match missing fails the job with a clear message, not retried", async () => {
    expectClearFailure(await withPath(join(dir, "empty"), () => resolveFont("DejaVu Sans", "normal").catch((e) => e)));
  });

  it("fc-match failing does the same", async () => {
    const bin = join(dir, "failing");
    await mkdir(bin);
    await writeFile(
      join(bin, "fc-match"),
      "#!/bin/sh\necho 'Fontconfig error: cannot load default config file' >&2\nexit 1\n",
    );
    await chmod(join(bin, "fc-match"), 0o755);
    expectClearFailure(await withPath(bin, () => resolveFont("DejaVu Sans", "normal").catch((e) => e)));
  });

  it("fc-match stuck is stopped, and the attempt fails as retryable: a passing state of the machine, not its set-up", async () => {
    const bin = join(dir, "stuck");
    await mkdir(bin);
    // Stuck for longer than the test may run: it ends in time only if it is stopped.
    const pidFile = join(bin, "pid");
    await writeFile(join(bin, "fc-match"), `#!/bin/sh\necho $$ > ${pidFile}\nexec /bin/sleep 600\n`);
    await chmod(join(bin, "fc-match"), 0o755);
    const err = await withPath(bin, () => resolveFont("DejaVu Sans", "normal").catch((e) => e));
    expect(err).toMatchObject({ kind: "internal", retryable: true });
    const pid = Number(await readFile(pidFile, "utf8"));
    expect(pid).toBeGreaterThan(0);
    await vi.waitFor(() => expect(existsSync(`/proc/${pid}`), `fc-match (${pid}) still running`).toBe(false));
  }, 30_000);
});
