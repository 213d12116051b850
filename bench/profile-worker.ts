/**
 * npm run bench:profile [-- <route>] — where the Worker's own CPU goes on one of bench:api's
 * routes: a CPU profile of the isolate, taken through workerd's DevTools inspector while
 * autocannon drives the route (BENCH_CONNECTIONS, 10; BENCH_SECONDS, 5, after 2 s of warm-up).
 * Routes: job (GET /jobs/{id}, the default), list, create, completed, completed-list, healthz.
 *
 * Prints the functions that held the most samples, by their own time and with what they call,
 * as shares of all samples (idle included), and writes the profile to
 * test-artifacts/worker-<route>.cpuprofile for Chrome DevTools' Performance panel.
 */
// @ts-expect-error autocannon ships no types
import autocannon from "autocannon";
import { mkdir, writeFile } from "node:fs/promises";
import WebSocket from "ws";
import { freePort } from "../dev/cloud/free-port";
import { ROUTE_IDS, startApiFixture } from "./api-fixture";
import { recordRun } from "./results";

const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 10);
const route = process.argv[2] ?? "job";
if (!(ROUTE_IDS as readonly string[]).includes(route)) {
  console.error(`The route must be one of ${ROUTE_IDS.join(", ")}.`);
  process.exit(2);
}

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
}

/** A minimal DevTools protocol session: commands answered by id; a closed inspector fails what waits on it. */
async function inspect(url: string) {
  const socket = new WebSocket(url);
  await new Promise((resolve, reject) => socket.once("open", resolve).once("error", reject));
  let nextId = 0;
  const waiting = new Map<number, { resolve: (result: unknown) => void; reject: (err: Error) => void }>();
  socket.on("message", (data) => {
    const message = JSON.parse(String(data));
    const call = waiting.get(message.id);
    waiting.delete(message.id);
    if (message.error) call?.reject(new Error(`inspector: ${message.error.message}`));
    else call?.resolve(message.result);
  });
  socket.on("close", () => {
    for (const call of waiting.values()) call.reject(new Error("the inspector closed its connection"));
    waiting.clear();
  });
  return {
    send: (method: string, params: Record<string, unknown> = {}) =>
      new Promise<unknown>((resolve, reject) => {
        const id = ++nextId;
        waiting.set(id, { resolve, reject });
        socket.send(JSON.stringify({ id, method, params }));
      }),
    close: () => socket.close(),
  };
}

/** The parts of autocannon's result read here. */
interface Result {
  requests: { average: number };
  non2xx: number;
}

const drive = (opts: Record<string, unknown>, seconds: number) =>
  new Promise<Result>((resolve, reject) =>
    autocannon({ ...opts, duration: seconds, connections: CONNECTIONS }, (err: Error | null, res: Result) =>
      err ? reject(err) : resolve(res),
    ),
  );

/** Shares of all samples by function: its own, and with everything it called (each function counted once per sample). */
function tally(profile: Profile) {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const child of n.children ?? []) parent.set(child, n.id);
  const name = (n: ProfileNode) => {
    const { functionName, url, lineNumber } = n.callFrame;
    return url
      ? `${functionName || "(anonymous)"} ${url.split("/").pop()}:${lineNumber + 1}`
      : functionName || "(anonymous)";
  };
  const self = new Map<string, number>();
  const total = new Map<string, number>();
  for (const sample of profile.samples) {
    const leaf = byId.get(sample)!;
    self.set(name(leaf), (self.get(name(leaf)) ?? 0) + 1);
    const seen = new Set<string>();
    for (let id: number | undefined = sample; id !== undefined; id = parent.get(id)) {
      const key = name(byId.get(id)!);
      if (seen.has(key)) continue;
      seen.add(key);
      total.set(key, (total.get(key) ?? 0) + 1);
    }
  }
  const top = (counts: Map<string, number>, n: number) =>
    [...counts]
      .sort((a, b) => b[1] - a[1])
      .slice(0, n)
      .map(([key, count]) => `${((100 * count) / profile.samples.length).toFixed(1).padStart(5)}%  ${key}`);
  return { self: top(self, 30), total: top(total, 40) };
}

const inspectorPort = await freePort();
const fixture = await startApiFixture({ workerInspectorPort: inspectorPort });
try {
  const { name, opts } = fixture.routes.find((r) => r.id === route)!;
  const targets = (await (await fetch(`http://127.0.0.1:${inspectorPort}/json`)).json()) as {
    id: string;
    webSocketDebuggerUrl: string;
  }[];
  // Miniflare's own workers (its entry, its caches) are listed too; the app is the user worker.
  const app = targets.find((t) => t.id.startsWith("core:user:"));
  if (!app) throw new Error(`no user worker among the inspector's targets: ${targets.map((t) => t.id).join(", ")}`);
  const session = await inspect(app.webSocketDebuggerUrl);
  await session.send("Profiler.enable");
  await session.send("Profiler.setSamplingInterval", { interval: 100 });
  await drive(opts, 2);
  await session.send("Profiler.start");
  const result = await drive(opts, SECONDS);
  const { profile } = (await session.send("Profiler.stop")) as { profile: Profile };
  session.close();

  await mkdir("test-artifacts", { recursive: true });
  const file = `test-artifacts/worker-${route}.cpuprofile`;
  await writeFile(file, JSON.stringify(profile));
  const { self, total } = tally(profile);
  console.log(
    `\n${name}: ${result.requests.average.toFixed(0)} req/s at ${CONNECTIONS} connections, ${result.non2xx} non-2xx; ${profile.samples.length} samples in ${SECONDS} s`,
  );
  console.log(`\nOwn time (shares of all samples)\n${self.join("\n")}`);
  console.log(`\nWith what it calls\n${total.join("\n")}`);
  console.log(`\nProfile: ${file} (Chrome DevTools, Performance panel: load profile)`);
  const shares = (lines: string[]) => lines.slice(0, 10).map((line) => line.trim());
  recordRun(
    "profile",
    { route, connections: CONNECTIONS, seconds: SECONDS },
    {
      requestsPerSecond: Math.round(result.requests.average),
      non2xx: result.non2xx,
      samples: profile.samples.length,
      ownTime: shares(self),
      withWhatItCalls: shares(total),
    },
  );
} finally {
  await fixture.stop();
}
