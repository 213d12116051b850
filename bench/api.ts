/**
 * npm run bench:api — GET /jobs/{id}, GET /jobs and POST /jobs against the Worker as `npm run
 * dev` serves it (workerd) with autocannon, each against GET /healthz (a bare Hono route in the
 * same Worker, no I/O) measured in the same round (BENCH_ROUNDS rounds of BENCH_SECONDS per
 * route). Prints requests/s, p50/p99 latency, the ratio to the baseline (the median round's, and
 * each round's), and the CPU each request cost each process on this machine (Linux /proc); then
 * where a request's time goes: each route called one request at a time, its Server-Timing header
 * read (the Worker's wait on each kind of sub-request) beside the latency the client saw.
 *
 * Each round also measures the ceiling (sub-request-ceiling.ts): a Worker that does nothing but N
 * sub-requests, against its own bare route. A route's ratio is printed beside the ceiling for as
 * many sub-requests as it makes (counted from its Server-Timing header), since no code of ours
 * can take a route past it on this machine, and the share of it the route reaches.
 */
// @ts-expect-error autocannon ships no types
import autocannon from "autocannon";
import { Redis } from "@upstash/redis";
import { readdirSync, readFileSync } from "node:fs";
import { foundOutputEntry } from "../worker/lib/output-links";
import { freePort } from "../dev/cloud/free-port";
import { BASELINE, startApiFixture } from "./api-fixture";
import { recordRun, tableRecords } from "./results";
import { MAX_SUBREQUESTS, startCeilingWorker } from "./sub-request-ceiling";

const DURATION_S = Number(process.env.BENCH_SECONDS ?? 6);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 10);
const SAMPLES = Number(process.env.BENCH_SAMPLES ?? 200);

interface Result {
  requests: { average: number };
  latency: { p50: number; p99: number };
  non2xx: number;
  errors: number;
}

function run(opts: Record<string, unknown>): Promise<Result> {
  return new Promise((resolve, reject) => {
    autocannon({ duration: DURATION_S, connections: CONNECTIONS, ...opts }, (err: Error | null, res: Result) =>
      err ? reject(err) : resolve(res),
    );
  });
}

/** CPU time (ms) used so far by this machine's processes whose command line `matches`. */
function cpuMs(matches: (cmdline: string) => boolean): number {
  let ticks = 0;
  for (const pid of readdirSync("/proc").filter((d) => /^\d+$/.test(d))) {
    try {
      if (!matches(readFileSync(`/proc/${pid}/cmdline`, "utf8").replaceAll("\0", " "))) continue;
      const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
      const [utime, stime] = stat
        .slice(stat.lastIndexOf(")") + 2)
        .split(" ")
        .slice(11, 13)
        .map(Number);
      ticks += utime + stime;
    } catch {
      // the process ended meanwhile
    }
  }
  return ticks * 10; // USER_HZ is 100 on Linux
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted.length ? sorted[Math.floor(sorted.length / 2)] : 0;
};

/** `db;dur=1.2;desc="1 call", total;dur=2` → { db: { ms: 1.2, calls: 1 }, total: { ms: 2, calls: 0 } } */
function serverTiming(header: string | null): Record<string, { ms: number; calls: number }> {
  const metrics: Record<string, { ms: number; calls: number }> = {};
  for (const entry of (header ?? "").split(",")) {
    const [name, ...params] = entry.trim().split(";");
    const dur = params.find((p) => p.startsWith("dur="));
    const calls = params.map((p) => /^desc="(\d+) calls?"$/.exec(p)).find(Boolean);
    if (name && dur) metrics[name] = { ms: Number(dur.slice(4)), calls: calls ? Number(calls[1]) : 0 };
  }
  return metrics;
}

/** The sub-requests a response's Server-Timing header counts (signing is the Worker's own work, not one). */
function subrequestCount(header: string | null): number {
  return Object.entries(serverTiming(header)).reduce(
    (sum, [kind, { calls }]) => (kind === "sign" ? sum : sum + calls),
    0,
  );
}

const ceilingName = (n: number) => (n === 0 ? "ceiling: bare route" : `ceiling: ${n} sub-request${n === 1 ? "" : "s"}`);

const fixture = await startApiFixture();
const ceilingPort = await freePort();
const ceiling = await startCeilingWorker(ceilingPort).catch(async (err) => {
  await fixture.stop();
  throw err;
});
try {
  const { stack, base, headers, creatorHeaders, createBody, jobId, completedId, outputKey } = fixture;
  const { cloud } = stack;

  // Who spends the CPU: the Worker's workerd, PostgreSQL serving this run's database, and this
  // process (the local cloud's stand-ins and autocannon). Others' processes share the machine.
  const database = new URL(stack.databaseUrl).pathname.slice(1);
  const workerPort = new URL(base).port;
  const accounts: [string, () => number][] = [
    // Ours, or the ceiling's: only one of the two is driven at a time.
    [
      "the Worker (workerd)",
      () =>
        cpuMs(
          (cmd) =>
            cmd.includes("bin/workerd serve") &&
            [workerPort, ceilingPort].some((port) => cmd.includes(`entry=127.0.0.1:${port} `)),
        ),
    ],
    [
      "stand-ins + load generator (this process)",
      () => {
        const u = process.cpuUsage();
        return (u.user + u.system) / 1000;
      },
    ],
    [
      "PostgreSQL (this run's database)",
      () => cpuMs((cmd) => cmd.startsWith("postgres:") && cmd.includes(` ${database} `)),
    ],
  ];
  /** CPU spent by each account, and requests made, summed over the rounds for one route. */
  const spentBy = new Map<string, { cpu: number[]; requests: number }>();
  async function measuredRun(name: string, opts: Record<string, unknown>) {
    const before = accounts.map(([, read]) => read());
    const result = await run(opts);
    const tally = spentBy.get(name) ?? { cpu: accounts.map(() => 0), requests: 0 };
    accounts.forEach(([, read], i) => {
      tally.cpu[i] += read() - before[i];
    });
    tally.requests += result.requests.average * DURATION_S;
    spentBy.set(name, tally);
    return result;
  }

  const ceilingCases = Array.from({ length: MAX_SUBREQUESTS + 1 }, (_, n) => ({
    name: ceilingName(n),
    baseline: ceilingName(0),
    opts: { url: ceiling.url(n) },
  }));
  const cases = [...fixture.routes.map((route) => ({ ...route, baseline: BASELINE })), ...ceilingCases];
  // Counted on a second call: the first may fill a cache (a HEAD remembered) that the run then reads.
  const subrequests = new Map<string, number>();
  for (const { name, opts } of fixture.routes) {
    for (let call = 0; call < 2; call++) {
      const res = await fetch(opts.url, opts);
      await res.arrayBuffer();
      subrequests.set(name, subrequestCount(res.headers.get("Server-Timing")));
    }
  }

  // Rounds, each the baseline and then every route, then the ceiling's: the host's speed drifts
  // over a run, so each route's ratio is taken against the bare route of its own round (ours, or
  // the ceiling's), and the median round reported.
  const rounds: Map<string, Result & { ratio: number }>[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    const results = new Map<string, Result & { ratio: number }>();
    for (const { name, baseline, opts } of cases) {
      const r = await measuredRun(name, opts);
      results.set(name, {
        ...r,
        ratio: r.requests.average / (results.get(baseline)?.requests.average ?? r.requests.average),
      });
    }
    rounds.push(results);
  }

  const ratioOf = (name: string) => median(rounds.map((r) => r.get(name)!.ratio));
  const rows = [
    [
      "route",
      "req/s",
      "p50 ms",
      "p99 ms",
      "ratio to baseline (req/s)",
      "ratios by round",
      "non-2xx",
      "sub-requests",
      "ceiling for as many",
      "share of the ceiling",
    ],
  ];
  for (const { name } of cases) {
    const of = rounds.map((r) => r.get(name)!);
    const count = subrequests.get(name);
    const bound = count === undefined ? undefined : ceilingName(Math.min(count, MAX_SUBREQUESTS));
    rows.push([
      name,
      median(of.map((r) => r.requests.average)).toFixed(0),
      String(median(of.map((r) => r.latency.p50))),
      String(median(of.map((r) => r.latency.p99))),
      ratioOf(name).toFixed(2),
      of.map((r) => r.ratio.toFixed(2)).join(" "),
      String(of.reduce((sum, r) => sum + r.non2xx, 0)),
      count === undefined ? "" : String(count),
      bound === undefined ? "" : `${ratioOf(bound).toFixed(2)}${count! > MAX_SUBREQUESTS ? " (or less)" : ""}`,
      bound === undefined ? "" : (ratioOf(name) / ratioOf(bound)).toFixed(2),
    ]);
  }
  const cpuRows = [["route", ...accounts.map(([name]) => `${name} ms/req`), "total ms/req"]];
  for (const [name, { cpu, requests }] of spentBy) {
    const perRequest = cpu.map((ms) => ms / requests);
    cpuRows.push([name, ...perRequest.map((ms) => ms.toFixed(2)), perRequest.reduce((a, b) => a + b, 0).toFixed(2)]);
  }
  console.log(
    `\nAPI served by workerd, ${CONNECTIONS} connections, ${ROUNDS} rounds of ${DURATION_S} s per route (medians of the rounds)\n`,
  );
  for (const row of rows) console.log(`| ${row.join(" | ")} |`);
  console.log(`\nCPU per request, by process, over all rounds\n`);
  for (const row of cpuRows) console.log(`| ${row.join(" | ")} |`);

  // Where the time goes, one request at a time. For the completed job's cold read the remembered
  // HEAD is dropped before each request, so it pays the HEAD and remembers it again.
  const redis = new Redis({ url: cloud.redis.url, token: cloud.redis.token });
  const sampled: [string, string, RequestInit, (() => Promise<unknown>)?][] = [
    ["GET /healthz", `${base}/healthz`, {}],
    ["GET /jobs/{id} (queued)", `${base}/api/v1/jobs/${jobId}`, { headers }],
    ["GET /jobs/{id} (completed, HEAD remembered)", `${base}/api/v1/jobs/${completedId}`, { headers }],
    [
      "GET /jobs/{id} (completed, HEAD paid)",
      `${base}/api/v1/jobs/${completedId}`,
      { headers },
      () => redis.del(foundOutputEntry(outputKey)),
    ],
    ["GET /jobs (a page of 10, one completed)", `${base}/api/v1/jobs?limit=10`, { headers }],
    ["POST /jobs", `${base}/api/v1/jobs`, { method: "POST", headers: creatorHeaders, body: createBody }],
  ];
  const kinds = ["db", "cache", "storage-head", "sign", "queue"];
  const breakdown = [["request", "client ms", "waiting (Server-Timing total)", ...kinds.map((k) => `${k} ms (calls)`)]];
  for (const [name, url, init, before] of sampled) {
    const latencies: number[] = [];
    const metrics: ReturnType<typeof serverTiming>[] = [];
    for (let i = 0; i < SAMPLES; i++) {
      await before?.();
      const start = performance.now();
      const res = await fetch(url, init);
      await res.arrayBuffer();
      latencies.push(performance.now() - start);
      metrics.push(serverTiming(res.headers.get("Server-Timing")));
    }
    const of = (kind: string) => median(metrics.map((m) => m[kind]?.ms ?? 0));
    const calls = (kind: string) => metrics.at(-1)?.[kind]?.calls;
    breakdown.push([
      name,
      median(latencies).toFixed(1),
      of("total").toFixed(1),
      ...kinds.map((k) => (calls(k) ? `${of(k).toFixed(1)} (${calls(k)})` : "–")),
    ]);
  }
  console.log(`\nWhere the time goes: medians of ${SAMPLES} requests made one at a time\n`);
  for (const row of breakdown) console.log(`| ${row.join(" | ")} |`);
  recordRun(
    "api",
    { connections: CONNECTIONS, rounds: ROUNDS, seconds: DURATION_S, samples: SAMPLES },
    { routes: tableRecords(rows), cpuPerRequest: tableRecords(cpuRows), oneAtATime: tableRecords(breakdown) },
  );
} finally {
  await ceiling.stop();
  await fixture.stop();
}
