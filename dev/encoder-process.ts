import { spawn } from "node:child_process";
import { PROJECT_ROOT } from "./state";

/** The encoder as a plain Node process (the Fly.io container's stand-in). */
export async function startEncoderProcess(opts: {
  port: number;
  env: Record<string, string>;
  log?: (line: string) => void;
}): Promise<{ url: string; pid: number; stop: () => Promise<void> }> {
  const child = spawn(process.execPath, ["--import", "tsx", "encoder/main.ts"], {
    cwd: PROJECT_ROOT,
    env: { ...process.env, ...opts.env, PORT: String(opts.port), HOST: "127.0.0.1" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const log = opts.log ?? (() => undefined);
  child.stdout.on("data", (d) => String(d).split("\n").filter(Boolean).forEach(log));
  child.stderr.on("data", (d) => String(d).split("\n").filter(Boolean).forEach(log));
  const url = `http://127.0.0.1:${opts.port}`;
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((resolve) => child.once("exit", resolve));
    child.kill("SIGTERM");
    const timer = setTimeout(() => child.kill("SIGKILL"), 3000);
    await exited;
    clearTimeout(timer);
  };
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`encoder exited with code ${child.exitCode}`);
    try {
      if ((await fetch(`${url}/healthz`)).ok) return { url, pid: child.pid!, stop };
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  await stop();
  throw new Error("encoder did not become ready within 30 s");
}
