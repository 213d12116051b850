/**
 * npm run bench:api — GET /jobs/{id}, GET /jobs and POST /jobs through wrangler dev (workerd)
 * with autocannon, each against GET /healthz (a bare Hono route in the same Worker, no I/O)
 * measured in the same run. Prints requests/s, p50/p99 latency and the ratio to the baseline.
 */
// @ts-expect-error autocannon ships no types
import autocannon from "autocannon";
import { openAdmin } from "../dev/admin/commands";
import { startDeliverySink } from "../test/api/setup/delivery-sink";
import { startTestStack } from "../test/support/stack";

const DURATION_S = Number(process.env.BENCH_SECONDS ?? 8);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 10);

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

// Deliveries of the jobs the benchmark creates land in a sink, so no encoding competes for the CPU.
const sink = await startDeliverySink();
const stack = await startTestStack({ kind: "external", url: sink.url });
try {
  const admin = openAdmin({ databaseUrl: stack.info.databaseUrl, redis: stack.info.cloud.redis });
  const { apiKey } = await admin.createAccount("enterprise");
  await admin.close();
  const headers = { Authorization: `Bearer ${apiKey}`, "Content-Type": "application/json" };
  const base = stack.info.apiUrl;

  // Some history so the list has a full page to render.
  let jobId = "";
  for (let i = 0; i < 20; i++) {
    const res = await fetch(`${base}/api/v1/jobs`, {
      method: "POST",
      headers,
      body: JSON.stringify({ inputUrl: "https://media.example.com/a.mp4", preset: "mp4_264_720p" }),
    });
    jobId = ((await res.json()) as { id: string }).id;
  }

  const baseline = await run({ url: `${base}/healthz` });
  const cases: [string, Record<string, unknown>][] = [
    ["GET /jobs/{id}", { url: `${base}/api/v1/jobs/${jobId}`, headers }],
    ["GET /jobs", { url: `${base}/api/v1/jobs?limit=10`, headers }],
    [
      "POST /jobs",
      {
        url: `${base}/api/v1/jobs`,
        method: "POST",
        headers,
        body: JSON.stringify({ inputUrl: "https://media.example.com/a.mp4", preset: "mp4_264_720p" }),
      },
    ],
  ];
  const rows = [["route", "req/s", "p50 ms", "p99 ms", "ratio to baseline (req/s)", "non-2xx"]];
  rows.push(["GET /healthz (baseline)", baseline.requests.average.toFixed(0), String(baseline.latency.p50), String(baseline.latency.p99), "1.00", String(baseline.non2xx)]);
  for (const [name, opts] of cases) {
    const r = await run(opts);
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
} finally {
  await stack.stop();
  await sink.stop();
}
