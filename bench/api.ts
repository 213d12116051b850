/**
 * npm run bench:api — GET /jobs/{id}, GET /jobs and POST /jobs through wrangler's dev server
 * (workerd) with autocannon, each against GET /healthz (a bare Hono route in the same Worker, no
 * I/O) measured in the same run. Prints requests/s, p50/p99 latency, the ratio to the baseline,
 * and the CPU each request cost each process on this machine (Linux /proc); then where a
 * request's time goes: each route called one request at a time, its Server-Timing header read
 * (the Worker's wait on each kind of sub-request) beside the latency the client saw.
 */
// @ts-expect-error autocannon ships no types
import autocannon from "autocannon";
import { Redis } from "@upstash/redis";
import { AwsClient } from "aws4fetch";
import { readdirSync, readFileSync } from "node:fs";
import { openAdmin } from "../dev/admin/commands";
import { signInternal } from "../domain/internal-auth";
import { outputKeyFor } from "../domain/jobs";
import { s3ObjectUrl } from "../domain/s3";
import { startDeliverySink } from "../test/api/setup/delivery-sink";
import { startTestStack } from "../test/support/stack";
import { foundOutputEntry } from "../worker/lib/output-links";

const DURATION_S = Number(process.env.BENCH_SECONDS ?? 8);
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
      const [utime, stime] = stat.slice(stat.lastIndexOf(")") + 2).split(" ").slice(11, 13).map(Number);
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

/** `db;dur=1.2;desc="1 call", cache;dur=0.8` → { db: 1.2, cache: 0.8 } */
function serverTiming(header: string | null): Record<string, number> {
  const metrics: Record<string, number> = {};
  for (const entry of (header ?? "").split(",")) {
    const [name, ...params] = entry.trim().split(";");
    const dur = params.find((p) => p.startsWith("dur="));
    if (name && dur) metrics[name] = Number(dur.slice(4));
  }
  return metrics;
}

// Deliveries of the jobs the benchmark creates land in a sink, so no encoding competes for the CPU.
const sink = await startDeliverySink();
const stack = await startTestStack({ kind: "external", url: sink.url });
try {
  const { cloud } = stack.info;
  const admin = openAdmin({ databaseUrl: stack.info.databaseUrl, redis: cloud.redis });
  const { apiKey, accountId } = await admin.createAccount("enterprise");
  await admin.close();
  const headers = { Authorization: `Bearer ${apiKey}`, "Content-Type": "application/json" };
  const base = stack.info.apiUrl;
  const createBody = JSON.stringify({ inputUrl: "https://media.example.com/a.mp4", preset: "mp4_264_720p" });
  const create = async () => {
    const res = await fetch(`${base}/api/v1/jobs`, { method: "POST", headers, body: createBody });
    return ((await res.json()) as { id: string }).id;
  };

  // Some history so the list has a full page to render.
  let jobId = "";
  for (let i = 0; i < 20; i++) jobId = await create();

  // One completed job, played through the internal API as the encoder would, for reads that sign a link.
  const completedId = await create();
  const internal = async (path: string, body: unknown) => {
    const raw = JSON.stringify(body);
    const res = await fetch(`${base}/internal${path}`, {
      method: "POST",
      headers: { "Content-Type": "application/json", ...(await signInternal(stack.info.internalSecret, raw)) },
      body: raw,
    });
    if (!res.ok) throw new Error(`${path}: ${res.status} ${await res.text()}`);
  };
  const outputKey = outputKeyFor(accountId, completedId, "output.mp4");
  const s3 = new AwsClient({ accessKeyId: cloud.s3.accessKeyId, secretAccessKey: cloud.s3.secretAccessKey, service: "s3", region: cloud.s3.region });
  await internal(`/jobs/${completedId}/claim`, { attempt: 0 });
  await s3.fetch(s3ObjectUrl(cloud.s3.endpoint, cloud.s3.bucket, outputKey), { method: "PUT", body: "bench output" });
  await internal(`/jobs/${completedId}/complete`, { outputKey, duration: 10 });

  // Who spends the CPU: the Worker's runtime, PostgreSQL serving this run's database, and this
  // process (the local cloud's stand-ins and autocannon). Others' processes share the machine.
  const database = new URL(stack.info.databaseUrl).pathname.slice(1);
  const accounts: [string, () => number][] = [
    ["the Worker's dev server (workerd, wrangler)", () => cpuMs((cmd) => cmd.includes(process.cwd()) && /workerd|wrangler-dev/.test(cmd))],
    ["stand-ins + load generator (this process)", () => { const u = process.cpuUsage(); return (u.user + u.system) / 1000; }],
    ["PostgreSQL (this run's database)", () => cpuMs((cmd) => cmd.startsWith("postgres:") && cmd.includes(` ${database} `))],
  ];
  const cpuRows = [["route", ...accounts.map(([name]) => `${name} ms/req`), "total ms/req"]];
  async function measuredRun(name: string, opts: Record<string, unknown>) {
    const before = accounts.map(([, read]) => read());
    const result = await run(opts);
    const total = result.requests.average * DURATION_S;
    const spent = accounts.map(([, read], i) => (read() - before[i]) / total);
    cpuRows.push([name, ...spent.map((ms) => ms.toFixed(2)), spent.reduce((a, b) => a + b, 0).toFixed(2)]);
    return result;
  }

  const baseline = await measuredRun("GET /healthz (baseline)", { url: `${base}/healthz` });
  const cases: [string, Record<string, unknown>][] = [
    ["GET /jobs/{id}", { url: `${base}/api/v1/jobs/${jobId}`, headers }],
    ["GET /jobs", { url: `${base}/api/v1/jobs?limit=10`, headers }],
    ["POST /jobs", { url: `${base}/api/v1/jobs`, method: "POST", headers, body: createBody }],
    ["GET /jobs/{id} (completed: HEAD remembered, link signed)", { url: `${base}/api/v1/jobs/${completedId}`, headers }],
  ];
  const rows = [["route", "req/s", "p50 ms", "p99 ms", "ratio to baseline (req/s)", "non-2xx"]];
  rows.push(["GET /healthz (baseline)", baseline.requests.average.toFixed(0), String(baseline.latency.p50), String(baseline.latency.p99), "1.00", String(baseline.non2xx)]);
  for (const [name, opts] of cases) {
    const r = await measuredRun(name, opts);
    rows.push([
      name,
      r.requests.average.toFixed(0),
      String(r.latency.p50),
      String(r.latency.p99),
      (r.requests.average / baseline.requests.average).toFixed(2),
      String(r.non2xx),
    ]);
  }
  console.log(`\nAPI through wrangler dev, ${CONNECTIONS} connections, ${DURATION_S} s each\n`);
  for (const row of rows) console.log(`| ${row.join(" | ")} |`);
  console.log(`\nCPU per request, by process, during the runs above\n`);
  for (const row of cpuRows) console.log(`| ${row.join(" | ")} |`);

  // Where the time goes, one request at a time. For the completed job's cold read the remembered
  // HEAD is dropped before each request, so it pays the HEAD and remembers it again.
  const redis = new Redis({ url: cloud.redis.url, token: cloud.redis.token });
  const sampled: [string, string, RequestInit, (() => Promise<unknown>)?][] = [
    ["GET /healthz", `${base}/healthz`, {}],
    ["GET /jobs/{id} (queued)", `${base}/api/v1/jobs/${jobId}`, { headers }],
    ["GET /jobs/{id} (completed, HEAD remembered)", `${base}/api/v1/jobs/${completedId}`, { headers }],
    ["GET /jobs/{id} (completed, HEAD paid)", `${base}/api/v1/jobs/${completedId}`, { headers }, () => redis.del(foundOutputEntry(outputKey))],
    ["GET /jobs (a page of 10 queued jobs)", `${base}/api/v1/jobs?limit=10`, { headers }],
    ["POST /jobs", `${base}/api/v1/jobs`, { method: "POST", headers, body: createBody }],
  ];
  const kinds = ["db", "cache", "storage-head", "sign", "queue"];
  const breakdown = [["request", "client ms", "waiting (Server-Timing total)", ...kinds.map((k) => `${k} ms (calls)`)]];
  for (const [name, url, init, before] of sampled) {
    const latencies: number[] = [];
    const metrics: Record<string, number>[] = [];
    const calls: Record<string, string> = {};
    for (let i = 0; i < SAMPLES; i++) {
      await before?.();
      const start = performance.now();
      const res = await fetch(url, init);
      await res.arrayBuffer();
      latencies.push(performance.now() - start);
      const header = res.headers.get("Server-Timing");
      metrics.push(serverTiming(header));
      for (const m of (header ?? "").matchAll(/([\w-]+);dur=[\d.]+;desc="(\d+) call/g)) calls[m[1]] = m[2];
    }
    const of = (kind: string) => median(metrics.map((m) => m[kind] ?? 0));
    breakdown.push([
      name,
      median(latencies).toFixed(1),
      of("total").toFixed(1),
      ...kinds.map((k) => (calls[k] ? `${of(k).toFixed(1)} (${calls[k]})` : "–")),
    ]);
  }
  console.log(`\nWhere the time goes: medians of ${SAMPLES} requests made one at a time\n`);
  for (const row of breakdown) console.log(`| ${row.join(" | ")} |`);
} finally {
  await stack.stop();
  await sink.stop();
}
