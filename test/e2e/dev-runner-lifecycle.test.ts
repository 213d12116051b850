import { createServer } from "node:http";
import { type AddressInfo, createServer as createNetServer, type Socket } from "node:net";
import { chmod, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { freePort } from "../../dev/cloud/free-port";
import { close, listen } from "../../dev/cloud/listen";
import { processCommand, processStartTime } from "../../dev/cloud/processes";
import { heldFfmpeg, running } from "../support/held-ffmpeg";
import {
  ctrlC,
  ctrlCWhileBusy,
  devEnv,
  exists,
  listening,
  postgresOf,
  processesMatching,
  readyBanner,
  spawnDev,
  waitFor,
  workerOn,
} from "./dev-runner-support";

/**
 * How `npm run dev` starts, refuses to start and ends, beyond Ctrl-C (dev-runner.test.ts): a port
 * taken, its Worker's server gone, other signals, services that do not answer. The runs share one
 * temporary DATA_DIR, as one checkout's runs share .data.
 */
let dataDir: string;
beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), "dev-runner-lifecycle-"));
  await chmod(dataDir, 0o755); // as root, PostgreSQL runs as the user postgres
});
afterAll(() => rm(dataDir, { recursive: true, force: true }));

const startDev = (port: number, extra: Record<string, string> = {}) =>
  spawnDev(devEnv(dataDir, { PORT: String(port), ...extra }));

/** The runner's own process (under npm), as its lock names it. */
const runnerPid = async (): Promise<number> => JSON.parse(await readFile(join(dataDir, "in-use.json"), "utf8")).pid;

const gone = (pid: number) => !running(pid);

/** A server that accepts connections and never says a word. */
async function silentServer() {
  const sockets = new Set<Socket>();
  const server = createNetServer((socket) => sockets.add(socket));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    port: (server.address() as AddressInfo).port,
    connections: () => sockets.size,
    close: () => {
      for (const socket of sockets) socket.destroy();
      server.close();
    },
  };
}

/** Nothing of a run is left: no Worker on its port, no PostgreSQL on its data, no lock, no state for `npm run admin`. */
async function expectAllGone(port: number, dir = dataDir) {
  await waitFor("the Worker's server to be gone", () => (workerOn(port).length === 0 ? true : undefined), 10_000);
  expect(await listening(port)).toBe(false);
  expect(postgresOf(dir)).toEqual([]);
  expect(await exists(join(dir, "in-use.json"))).toBe(false);
  expect(await exists(join(dir, "dev-state.json"))).toBe(false);
}

describe("npm run dev's start and end", () => {
  it("refuses a PORT that is not a port at once, saying what it takes", async () => {
    const dev = spawnDev(devEnv(dataDir, { PORT: "abc" }));
    expect(await dev.exited).toBe(1);
    expect(dev.output()).toContain(
      `PORT must be a whole number from 1 to 65535 (unset or empty for 8787); it was "abc".`,
    );
    expect(dev.output()).not.toMatch(/Starting/);
  });

  it("refuses a port another server holds at once, naming PORT, rather than take that server's answers for its Worker's", async () => {
    const other = createServer((_req, res) => res.end(`{"ok":true}`));
    const port = await listen(other, "127.0.0.1", await freePort());
    try {
      const dev = startDev(port);
      expect(await dev.exited).toBe(1);
      expect(dev.output()).toMatch(
        new RegExp(`Port ${port} is in use: another npm run dev\\?.*PORT=${port + 1} npm run dev`),
      );
      expect(dev.output()).not.toMatch(/Ready\./);
    } finally {
      await close(other);
    }
    expect(await exists(join(dataDir, "in-use.json"))).toBe(false);
  });

  it("stops, non-zero and whole, when its Worker's server ends on its own", async () => {
    const port = await freePort();
    const dev = startDev(port);
    await readyBanner(dev);
    const { processes } = JSON.parse(await readFile(join(dataDir, "in-use.json"), "utf8"));
    expect(await exists(join(dataDir, "dev-state.json"))).toBe(true);
    const worker = processes.find((p: { group: boolean }) => p.group);
    process.kill(-worker.pid, "SIGKILL");
    expect(await dev.exited).toBe(1);
    expect(dev.output()).toMatch(
      /The Worker's server exited \(SIGKILL\); with nothing serving the API, npm run dev stops\./,
    );
    await expectAllGone(port);
  });

  it("a Ctrl-C reads as a stop however long the runner takes to handle it: the encoder is neither reported crashed nor restarted", async () => {
    const port = await freePort();
    const dev = startDev(port);
    await readyBanner(dev);
    const { pid: runner, processes } = JSON.parse(await readFile(join(dataDir, "in-use.json"), "utf8"));
    const commands = await Promise.all(processes.map(({ pid }: { pid: number }) => processCommand(pid)));
    const encoder: number = processes[commands.findIndex((command) => command?.includes("encoder/main.ts"))].pid;
    // Held for as long as the encoder would take to end on the terminal's signal, had it reached it.
    await ctrlCWhileBusy(
      dev.child,
      runner,
      waitFor("the encoder to end", () => (gone(encoder) ? true : undefined), 5000).catch(() => undefined),
    );
    expect(await dev.exited).toBe(0);
    const afterStop = dev.output().split("Stopping…")[1];
    expect(afterStop).toBeDefined();
    expect(afterStop).not.toMatch(/CRASHED|restart/);
    await expectAllGone(port);
  });

  it("refuses an ENCODERS that is not a count at once, saying what it takes", async () => {
    const dev = spawnDev(devEnv(dataDir, { ENCODERS: "0" }));
    expect(await dev.exited).toBe(1);
    expect(dev.output()).toContain(`ENCODERS must be a whole number from 1 to 16 (unset or empty for 1); it was "0".`);
    expect(dev.output()).not.toMatch(/Starting/);
  });

  it("ENCODERS=2: two encoder processes, named, each restarted on its own; Ctrl-C stops both", async () => {
    const port = await freePort();
    const dev = startDev(port, { ENCODERS: "2" });
    const banner = await readyBanner(dev);
    expect(banner).toMatch(
      /Encoders +http:\/\/127\.0\.0\.1:\d+ +2 encoders \(encoder-1, encoder-2\) behind a local stand-in for Fly\.io's proxy/,
    );
    const encoderPids = async () => {
      const { processes } = JSON.parse(await readFile(join(dataDir, "in-use.json"), "utf8"));
      const pids: number[] = processes.map(({ pid }: { pid: number }) => pid);
      const commands = await Promise.all(pids.map((pid) => processCommand(pid)));
      return pids.filter((_, i) => commands[i]?.includes("encoder/main.ts"));
    };
    const nameOf = async (pid: number) =>
      /(?:^|\0)ENCODER_NAME=([^\0]*)/.exec(await readFile(`/proc/${pid}/environ`, "utf8"))?.[1];
    const [first, second] = await encoderPids();
    expect([await nameOf(first), await nameOf(second)]).toEqual(["encoder-1", "encoder-2"]);

    process.kill(second, "SIGKILL");
    const restarted = await waitFor("encoder-2 to be restarted", async () => {
      const now = await encoderPids();
      return now.length === 2 && !now.includes(second) ? now[1] : undefined;
    });
    expect(await nameOf(restarted)).toBe("encoder-2");
    await waitFor("encoder-2 to answer again", () =>
      dev.output().includes(`encoder restarted: pid ${restarted} is answering`) ? true : undefined,
    );
    expect(dev.output()).toMatch(new RegExp(`ENCODER CRASHED: pid ${second} was killed by SIGKILL`));
    expect(gone(first)).toBe(false);

    ctrlC(dev.child);
    expect(await dev.exited).toBe(0);
    expect(dev.output().split("Stopping…")[1]).not.toMatch(/CRASHED|restart/);
    expect([first, restarted].filter((pid) => !gone(pid))).toEqual([]);
    await expectAllGone(port);
  });

  it("stops whole when its terminal closes (SIGHUP to its process group)", async () => {
    const port = await freePort();
    const dev = startDev(port);
    await readyBanner(dev);
    const runner = await runnerPid();
    process.kill(-dev.child.pid!, "SIGHUP");
    await waitFor("the runner to end", () => (gone(runner) ? true : undefined), 60_000);
    expect(dev.output()).toMatch(/Stopping…/);
    await expectAllGone(port);
  });

  it("stops whole on a SIGTERM to npm alone (kill <npm pid>): npm passes it on to the runner, which the script execs", async () => {
    const port = await freePort();
    const dev = startDev(port);
    await readyBanner(dev);
    const runner = await runnerPid();
    process.kill(dev.child.pid!, "SIGTERM");
    await waitFor("the runner to end", () => (gone(runner) ? true : undefined), 60_000);
    expect(dev.output()).toMatch(/Stopping…/);
    await expectAllGone(port);
  });

  it("a REDIS_URL that refuses fails the start at once, naming REDIS_URL; nothing is left", async () => {
    const port = await freePort();
    const redisPort = await freePort();
    const dev = startDev(port, { REDIS_URL: `redis://127.0.0.1:${redisPort}` });
    expect(await dev.exited).toBe(1);
    expect(dev.output()).toMatch(
      new RegExp(`REDIS_URL: Redis at redis://127\\.0\\.0\\.1:${redisPort} did not answer within 10 s: .*ECONNREFUSED`),
    );
    expect(dev.output()).not.toMatch(/Ready\./);
    await expectAllGone(port);
  });

  it("a DATABASE_URL that accepts and never answers fails the start within 10 s, naming DATABASE_URL (not its password)", async () => {
    const silent = await silentServer();
    try {
      const port = await freePort();
      const dev = startDev(port, { DATABASE_URL: `postgres://someone:secret-pw@127.0.0.1:${silent.port}/db` });
      expect(await dev.exited).toBe(1);
      expect(dev.output()).toMatch(
        new RegExp(
          `DATABASE_URL: the database at postgres://someone:\\*\\*\\*@127\\.0\\.0\\.1:${silent.port}/db did not answer within 10 s`,
        ),
      );
      expect(dev.output()).not.toContain("secret-pw");
      await expectAllGone(port);
    } finally {
      silent.close();
    }
  });

  it("a second signal stops at once a stop held by what does not answer (a silent Redis, an FFmpeg deaf to the stop), PostgreSQL included", async () => {
    // The start waits on the silent Redis for at most 10 s; the stop then waits on the sample's
    // FFmpeg, which ignores the SIGTERM the stop sends it, for its whole minute: the stop is still
    // under way when the second signal comes, however slow this machine is at the moment.
    const dir = await mkdtemp(join(tmpdir(), "dev-runner-second-signal-"));
    await chmod(dir, 0o755);
    const held = await heldFfmpeg(dir, "testsrc2=size=1280x720", { deaf: true });
    const silent = await silentServer();
    let heldPid: number | undefined;
    try {
      const port = await freePort();
      const dev = spawnDev(
        devEnv(dir, { PORT: String(port), PATH: held.path, REDIS_URL: `redis://127.0.0.1:${silent.port}` }),
      );
      await waitFor(
        "PostgreSQL and the sample's FFmpeg to be up",
        async () =>
          postgresOf(dir).length > 0 && silent.connections() > 0 && (await exists(held.pidFile)) ? true : undefined,
        60_000,
      );
      heldPid = await held.pid();
      const runner: number = JSON.parse(await readFile(join(dir, "in-use.json"), "utf8")).pid;
      process.kill(runner, "SIGTERM");
      // Later than npm's copy of a Ctrl-C, which is not a second signal: the runner takes a signal
      // within ONE_KEYPRESS_MS (dev/run.ts, 500 ms by its clock) of the first for that copy. It
      // has taken the first once it says so; the second goes once the clock is past that window.
      await waitFor("the stop to begin", () => (dev.output().includes("Stopping…") ? true : undefined), 30_000);
      const stopping = Date.now();
      await vi.waitFor(() => expect(Date.now()).toBeGreaterThan(stopping + 500), { timeout: 5000, interval: 50 });
      expect(running(heldPid), "the stop is still waiting on the sample's FFmpeg").toBe(true);
      process.kill(runner, "SIGTERM");
      await waitFor("the runner to end", () => (gone(runner) ? true : undefined), 3000);
      expect(dev.output()).toMatch(/Stopping at once \(a second signal\)\./);
      await waitFor("PostgreSQL to end", () => (postgresOf(dir).length === 0 ? true : undefined), 10_000);
    } finally {
      if (heldPid !== undefined && running(heldPid)) process.kill(heldPid, "SIGKILL");
      silent.close();
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('a SIGTERM in the last steps of the start stops it there: no "Ready.", no state left for admin', async () => {
    // A data directory of its own, so the sample clip is still to be made, and an ffmpeg on PATH
    // that holds that one encode: the start cannot pass its samples step until the signal comes,
    // however quickly the steps after the state's write run on this machine.
    const dir = await mkdtemp(join(tmpdir(), "dev-runner-last-steps-"));
    await chmod(dir, 0o755);
    const held = await heldFfmpeg(dir, "testsrc2=size=1280x720");
    try {
      const port = await freePort();
      const dev = spawnDev(devEnv(dir, { PORT: String(port), PATH: held.path }));
      const stateWritten = join(dir, "dev-state.json");
      await waitFor("the state for admin", async () => ((await exists(stateWritten)) ? true : undefined), 60_000);
      const heldPid = await held.pid();
      const runner: number = JSON.parse(await readFile(join(dir, "in-use.json"), "utf8")).pid;
      process.kill(runner, "SIGTERM");
      await waitFor("the runner to end", () => (gone(runner) ? true : undefined), 60_000);
      expect(dev.output()).toMatch(/Stopping…/);
      expect(dev.output()).not.toMatch(/Ready\./);
      await expectAllGone(port, dir);
      expect(gone(heldPid)).toBe(true);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it("a run refused a data directory another run holds leaves no FFmpeg and no partial sample behind; it names DATA_DIR and PORT", async () => {
    const held = await mkdtemp(join(tmpdir(), "dev-runner-held-"));
    try {
      // Held by a live process (this one), its samples not made yet: the refused run starts making them.
      await writeFile(
        join(held, "in-use.json"),
        JSON.stringify({ pid: process.pid, started: await processStartTime(process.pid), about: {} }),
      );
      const port = await freePort();
      const dev = spawnDev(devEnv(held, { PORT: String(port) }));
      expect(await dev.exited).toBe(1);
      expect(dev.output()).toMatch(
        new RegExp(
          `already running on ${held} \\(pid ${process.pid}\\)[\\s\\S]*DATA_DIR=/some/dir PORT=${port + 1} npm run dev`,
        ),
      );
      expect(processesMatching(`ffmpeg.*${held}`)).toEqual([]);
      expect(await readdir(join(held, "samples"))).toEqual([]);
    } finally {
      await rm(held, { recursive: true, force: true });
    }
  });
});
