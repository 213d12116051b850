import { execFileSync } from "node:child_process";
import { createServer } from "node:http";
import { describe, expect, it, vi } from "vitest";
import { freePort } from "../../dev/cloud/free-port";
import { close, listen } from "../../dev/cloud/listen";
import { PortInUse, startWorkerProcess } from "../../dev/worker-process";

/** Command lines of live processes serving on `port` (dev/worker-serve.mjs, its workerd). */
function servingOn(port: number): string[] {
  try {
    return execFileSync("pgrep", ["-af", `(worker-serve|workerd).*[ :]${port}( |$)`], { encoding: "utf8" })
      .split("\n")
      .filter(Boolean);
  } catch {
    return []; // pgrep exits 1 when nothing matches
  }
}

describe("the Worker's server (dev/worker-process.ts)", () => {
  it("is not taken as ready on another server's answer on its port: PortInUse, and nothing of it is left", async () => {
    const other = createServer((_req, res) => res.end(`{"ok":true}`));
    const port = await listen(other, "127.0.0.1", await freePort());
    try {
      await expect(startWorkerProcess({ port, vars: {} })).rejects.toBeInstanceOf(PortInUse);
      expect(servingOn(port)).toEqual([]);
    } finally {
      await close(other);
    }
  }, 120_000);

  it("tells when it ends on its own; stop() then ends what it left (its workerd)", async () => {
    const port = await freePort();
    const worker = await startWorkerProcess({ port, vars: {} });
    try {
      process.kill(worker.pid, "SIGKILL");
      expect(await worker.exited).toEqual({ code: null, signal: "SIGKILL" });
    } finally {
      await worker.stop();
    }
    await vi.waitFor(() => expect(servingOn(port)).toEqual([]), { timeout: 10_000, interval: 100 });
  }, 120_000);

  it("with inspectorPort, opens workerd's DevTools inspector on the app's isolate (bench:profile profiles through it)", async () => {
    const [port, inspectorPort] = [await freePort(), await freePort()];
    const worker = await startWorkerProcess({ port, vars: {}, inspectorPort });
    try {
      const targets = (await (await fetch(`http://127.0.0.1:${inspectorPort}/json`)).json()) as {
        id: string;
        webSocketDebuggerUrl: string;
      }[];
      const app = targets.find((t) => t.id.startsWith("core:user:"));
      expect(app?.webSocketDebuggerUrl).toMatch(new RegExp(`^ws://127\\.0\\.0\\.1:${inspectorPort}/`));
    } finally {
      await worker.stop();
    }
  }, 120_000);
});
