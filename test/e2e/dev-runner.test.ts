import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort } from "../../dev/cloud/free-port";
import { PROJECT_ROOT } from "../../dev/state";
import { createScratchDatabase } from "../support/postgres";

/**
 * `npm run dev` as a person runs it: in a terminal of its own (a process group), stopped by
 * Ctrl-C, which the terminal sends to that whole group. wrangler runs in a group of its own,
 * beyond Ctrl-C's reach, so these tests check that nothing of it is left listening.
 */
let database: Awaited<ReturnType<typeof createScratchDatabase>>;
beforeAll(async () => {
  database = await createScratchDatabase("vep_dev");
});
afterAll(() => database.drop());

function startDev(port: number): { child: ChildProcess; output: () => string; exited: Promise<number | null> } {
  const child = spawn("npm", ["run", "dev"], {
    cwd: PROJECT_ROOT,
    env: { ...process.env, PORT: String(port), DATABASE_URL: database.url, REDIS_URL: "redis://127.0.0.1:6379" },
    detached: true,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stdout!.on("data", (d) => (output += d));
  child.stderr!.on("data", (d) => (output += d));
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  return { child, output: () => output, exited };
}

const ctrlC = (child: ChildProcess) => process.kill(-child.pid!, "SIGINT");

async function waitFor<T>(what: string, probe: () => T | undefined | Promise<T | undefined>, timeoutMs = 120_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const value = await probe();
    if (value !== undefined) return value;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`timed out waiting for ${what}`);
}

/** Command lines of live processes serving `port` under wrangler or workerd. */
function wranglerOn(port: number): string[] {
  try {
    return execFileSync("pgrep", ["-af", `(wrangler|workerd).*${port}`], { encoding: "utf8" }).split("\n").filter(Boolean);
  } catch {
    return []; // pgrep exits 1 when nothing matches
  }
}

async function listening(port: number): Promise<boolean> {
  return fetch(`http://127.0.0.1:${port}/healthz`).then(
    () => true,
    () => false,
  );
}

/** The banner's dashboard sign-in works and opens the same account as its API key. */
async function expectDashboardSignIn(banner: string, port: number, apiKey: string) {
  const [, url, email, password] = banner.match(/Dashboard\s+(\S+)\s+Sign in\s+(\S+)\s+password (\S+)/)!;
  expect(url).toBe(`http://127.0.0.1:${port}/dashboard`);
  const form = await fetch(`${url}/signin`);
  const formCookie = form.headers.getSetCookie()[0].split(";")[0];
  const token = /name="_csrf" value="([^"]+)"/.exec(await form.text())![1];
  const signIn = await fetch(`${url}/signin`, {
    method: "POST",
    redirect: "manual",
    headers: { "Content-Type": "application/x-www-form-urlencoded", Origin: `http://127.0.0.1:${port}`, Cookie: formCookie },
    body: new URLSearchParams({ _csrf: token, email, password }),
  });
  expect(signIn.status).toBe(303);
  const session = signIn.headers.getSetCookie()[0].split(";")[0];
  const keys = await fetch(`${url}/keys`, { headers: { Cookie: session } });
  expect(await keys.text()).toContain(`…${apiKey.slice(-4)}`);
}

describe("npm run dev", () => {
  it("serves the API on PORT, prints a working free-plan key and a curl line; Ctrl-C stops everything", async () => {
    const port = await freePort();
    const dev = startDev(port);
    try {
      const banner = await waitFor("the ready banner", () => (/Ready\.[\s\S]*Press Ctrl-C/.test(dev.output()) ? dev.output() : undefined));
      expect(banner).toContain(`http://127.0.0.1:${port}/api/v1`);
      expect(banner).toMatch(/loopback sources ALLOWED/);
      const apiKey = banner.match(/API key\s+(spk_\w+)/)![1];
      expect(banner).toContain(`curl -s http://127.0.0.1:${port}/api/v1/jobs -H 'Authorization: Bearer ${apiKey}'`);
      const res = await fetch(`http://127.0.0.1:${port}/api/v1/jobs`, { headers: { Authorization: `Bearer ${apiKey}` } });
      expect(res.status).toBe(200);
      expect(await fetch(`http://127.0.0.1:${port}/api/v1/presets`, { headers: { Authorization: `Bearer ${apiKey}` } }).then((r) => r.json())).toMatchObject({
        meta: { userPlan: "free" },
      });
      await expectDashboardSignIn(banner, port, apiKey);
    } finally {
      ctrlC(dev.child);
      await dev.exited;
    }
    expect(await listening(port)).toBe(false);
    expect(wranglerOn(port)).toEqual([]);
  });

  it("Ctrl-C while it is still starting leaves no wrangler behind", async () => {
    const port = await freePort();
    const dev = startDev(port);
    await waitFor("wrangler to be spawned", () => (wranglerOn(port).length > 0 ? true : undefined));
    ctrlC(dev.child);
    await dev.exited;
    expect(dev.output()).not.toMatch(/Ready\./);
    await waitFor("wrangler to be gone", () => (wranglerOn(port).length === 0 ? true : undefined), 10_000);
    expect(await listening(port)).toBe(false);
  });
});
