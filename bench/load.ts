/**
 * npm run bench:load [-- soak | load] — the service as a new user runs it (`npm run dev`, no
 * configuration, a temporary DATA_DIR), under two long runs. Both by default, the soak first
 * (the load leaves a backlog of queued jobs behind it).
 *
 * - soak: SOAK_JOBS (500) short jobs through the encoder (a 1 s 160x90 clip, mp4_264_240p, the
 *   fastest preset), the encoder's resident memory and open file descriptors sampled from /proc
 *   as they run; neither may grow without bound.
 * - load: LOAD_CLIENTS (200) clients for LOAD_SECONDS (60 s), each creating a job, reading it
 *   back four times and listing jobs, with no pause; against GET /healthz (a bare route of the
 *   same Worker) under the same clients in the same run as the baseline. Prints requests/s,
 *   p50/p99, the answers by status (target: no 5xx) and the quota units taken against the
 *   jobs created.
 */
import { readdir, readFile, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { startFileServer } from "../dev/cloud/file-server";
import { makeSource } from "../test/support/media";
import { startDevService, type DevService } from "./dev-service";
import { recordRun, tableRecords } from "./results";

const LOAD_CLIENTS = Number(process.env.LOAD_CLIENTS ?? 200);
const LOAD_SECONDS = Number(process.env.LOAD_SECONDS ?? 60);
const BASELINE_SECONDS = 10;
const READS_PER_JOB = 4;
const SOAK_JOBS = Number(process.env.SOAK_JOBS ?? 500);
const SOAK_SAMPLE_MS = 2000;
const SOAK_TIMEOUT_MS = 60 * 60_000;
const TERMINAL = ["completed", "failed", "cancelled"];

const phases = process.argv.slice(2).filter((a) => a === "soak" || a === "load");
const runSoak = phases.length === 0 || phases.includes("soak");
const runLoad = phases.length === 0 || phases.includes("load");

interface Sample {
  what: string;
  status: number | "network error";
  ms: number;
  /** For a 5xx or a network error: the body or the error, to say what it was. */
  detail?: string;
}

/** What the admin CLI prints for `account create`: the parts read here. */
interface CreatedAccount {
  accountId: string;
  apiKey: string;
}

/** The fields of an answer's body the loops read: a created or read job's. */
type AnswerBody = { id?: string; status?: string } | null;

function parseJson(text: string): AnswerBody {
  try {
    return JSON.parse(text) as AnswerBody;
  } catch {
    return null;
  }
}

function percentile(sorted: number[], p: number): number {
  return sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.ceil(p * sorted.length) - 1)];
}

function summarise(samples: Sample[], seconds: number) {
  const ms = samples.map((s) => s.ms).sort((a, b) => a - b);
  return {
    requests: samples.length,
    perSecond: samples.length / seconds,
    p50: percentile(ms, 0.5),
    p99: percentile(ms, 0.99),
  };
}

function byStatus(samples: Sample[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const s of samples) counts[String(s.status)] = (counts[String(s.status)] ?? 0) + 1;
  return counts;
}

/** `clients` loops of `body` until `seconds` have passed; every request timed. */
async function drive(
  clients: number,
  seconds: number,
  body: (
    request: (what: string, url: string, init?: RequestInit) => Promise<{ status: number; body: AnswerBody }>,
  ) => Promise<void>,
) {
  const samples: Sample[] = [];
  const deadline = Date.now() + seconds * 1000;
  const request = async (what: string, url: string, init?: RequestInit) => {
    const started = performance.now();
    try {
      const res = await fetch(url, init);
      const text = await res.text();
      const ms = performance.now() - started;
      samples.push({ what, status: res.status, ms, ...(res.status >= 500 ? { detail: text.slice(0, 300) } : {}) });
      return { status: res.status, body: parseJson(text) };
    } catch (err) {
      const cause = (err as { cause?: { code?: string; message?: string } }).cause;
      samples.push({
        what,
        status: "network error",
        ms: performance.now() - started,
        detail: `${err} ${cause?.code ?? cause?.message ?? ""}`,
      });
      return { status: 0, body: null };
    }
  };
  const started = performance.now();
  await Promise.all(
    Array.from({ length: clients }, async () => {
      while (Date.now() < deadline) await body(request);
    }),
  );
  return { samples, seconds: (performance.now() - started) / 1000 };
}

async function databaseCounts(databaseUrl: string, accountId: string) {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const units = await client.query("select coalesce(sum(count), 0)::int as n from usage where account_id = $1", [
      accountId,
    ]);
    const jobs = await client.query(
      "select count(*)::int as n, count(*) filter (where status in ('completed', 'failed', 'cancelled'))::int as ended, count(*) filter (where status = 'completed')::int as completed from jobs where account_id = $1",
      [accountId],
    );
    return {
      units: units.rows[0].n as number,
      jobs: jobs.rows[0].n as number,
      ended: jobs.rows[0].ended as number,
      completed: jobs.rows[0].completed as number,
    };
  } finally {
    await client.end();
  }
}

async function load(dev: DevService, source: string) {
  const { accountId, apiKey } = await dev.admin<CreatedAccount>(["account", "create", "--plan", "enterprise"]);
  const headers = { Authorization: `Bearer ${apiKey}`, "Content-Type": "application/json" };
  const api = `${dev.apiUrl}/api/v1`;

  const baseline = await drive(LOAD_CLIENTS, BASELINE_SECONDS, async (request) => {
    await request("GET /healthz", `${dev.apiUrl}/healthz`);
  });
  let created = 0;
  const run = await drive(LOAD_CLIENTS, LOAD_SECONDS, async (request) => {
    const job = await request("POST /jobs", `${api}/jobs`, {
      method: "POST",
      headers,
      body: JSON.stringify({ inputUrl: source, preset: "mp4_264_240p" }),
    });
    if (job.status === 201) {
      created += 1;
      for (let i = 0; i < READS_PER_JOB; i++) {
        const read = await request("GET /jobs/{id}", `${api}/jobs/${job.body?.id}`, { headers });
        if (TERMINAL.includes(read.body?.status ?? "")) break;
      }
    }
    await request("GET /jobs", `${api}/jobs?limit=20`, { headers });
  });
  const counts = await databaseCounts(dev.databaseUrl, accountId);

  const base = summarise(baseline.samples, baseline.seconds);
  const all = summarise(run.samples, run.seconds);
  const rows = [
    ["", "requests", "req/s", "p50 ms", "p99 ms", "p50 / baseline p50", "p99 / baseline p99"],
    [
      "GET /healthz (baseline)",
      base.requests,
      base.perSecond.toFixed(0),
      base.p50.toFixed(1),
      base.p99.toFixed(1),
      "1.00",
      "1.00",
    ],
    [
      "all requests",
      all.requests,
      all.perSecond.toFixed(0),
      all.p50.toFixed(1),
      all.p99.toFixed(1),
      (all.p50 / base.p50).toFixed(2),
      (all.p99 / base.p99).toFixed(2),
    ],
    ...["POST /jobs", "GET /jobs/{id}", "GET /jobs"].map((what) => {
      const s = summarise(
        run.samples.filter((x) => x.what === what),
        run.seconds,
      );
      return [
        what,
        s.requests,
        s.perSecond.toFixed(0),
        s.p50.toFixed(1),
        s.p99.toFixed(1),
        (s.p50 / base.p50).toFixed(2),
        (s.p99 / base.p99).toFixed(2),
      ];
    }),
  ];
  const statuses = byStatus(run.samples);
  const serverErrors = run.samples.filter((s) => s.status === "network error" || s.status >= 500).length;
  console.log(
    `\n## Load: ${LOAD_CLIENTS} clients for ${run.seconds.toFixed(0)} s against npm run dev (embedded PostgreSQL)\n`,
  );
  for (const row of rows) console.log(`| ${row.join(" | ")} |`);
  console.log(
    `\nanswers by status: ${JSON.stringify(statuses)} (baseline: ${JSON.stringify(byStatus(baseline.samples))})`,
  );
  console.log(`5xx and network errors: ${serverErrors}`);
  const details = new Map<string, number>();
  for (const s of run.samples)
    if (s.detail)
      details.set(`${s.what} ${s.status}: ${s.detail}`, (details.get(`${s.what} ${s.status}: ${s.detail}`) ?? 0) + 1);
  for (const [detail, count] of details) console.log(`  ${count} × ${detail}`);
  console.log(
    `jobs created (201): ${created}; quota units taken: ${counts.units}; jobs in the database: ${counts.jobs}; ended meanwhile: ${counts.ended}`,
  );
  const held = serverErrors === 0 && counts.units === created && counts.jobs === created;
  console.log(`verdict: ${held ? "held (no 5xx, one quota unit per job created)" : "NOT HELD"}`);
  return {
    seconds: run.seconds,
    requests: tableRecords([["what", ...rows[0].slice(1)], ...rows.slice(1)]),
    statuses,
    serverErrors,
    created,
    unitsTaken: counts.units,
    jobsInDatabase: counts.jobs,
    endedMeanwhile: counts.ended,
    held,
  };
}

async function encoderSample(dev: DevService) {
  const pid = await dev.encoderPid();
  const status = await readFile(`/proc/${pid}/status`, "utf8");
  const rssKiB = Number(/^VmRSS:\s+(\d+) kB/m.exec(status)?.[1]);
  const fds = (await readdir(`/proc/${pid}/fd`)).length;
  return { pid, rssMiB: rssKiB / 1024, fds };
}

const median = (values: number[]) =>
  percentile(
    [...values].sort((a, b) => a - b),
    0.5,
  );

async function soak(dev: DevService, source: string) {
  const { accountId, apiKey } = await dev.admin<CreatedAccount>(["account", "create", "--plan", "enterprise"]);
  const headers = { Authorization: `Bearer ${apiKey}`, "Content-Type": "application/json" };
  const started = Date.now();
  const samples: { seconds: number; done: number; pid: number; rssMiB: number; fds: number }[] = [];
  const take = async () => {
    const { ended } = await databaseCounts(dev.databaseUrl, accountId);
    samples.push({ seconds: (Date.now() - started) / 1000, done: ended, ...(await encoderSample(dev)) });
  };
  await take();
  for (let submitted = 0; submitted < SOAK_JOBS; submitted += 50) {
    const batch = Math.min(50, SOAK_JOBS - submitted);
    const answers = await Promise.all(
      Array.from({ length: batch }, () =>
        fetch(`${dev.apiUrl}/api/v1/jobs`, {
          method: "POST",
          headers,
          body: JSON.stringify({ inputUrl: source, preset: "mp4_264_240p" }),
        }).then((r) => r.status),
      ),
    );
    if (answers.some((s) => s !== 201)) throw new Error(`the soak's jobs were not all accepted: ${answers.join(", ")}`);
  }
  while (samples.at(-1)!.done < SOAK_JOBS && Date.now() - started < SOAK_TIMEOUT_MS) {
    await new Promise((r) => setTimeout(r, SOAK_SAMPLE_MS));
    await take();
  }
  const counts = await databaseCounts(dev.databaseUrl, accountId);

  console.log(`\n## Soak: ${SOAK_JOBS} short jobs through the encoder (1 s 160x90 clip, mp4_264_240p)\n`);
  console.log("| elapsed s | jobs ended | encoder pid | RSS MiB | open fds |");
  let nextRow = 0;
  for (const s of samples) {
    if (s.done < nextRow && s !== samples.at(-1)) continue;
    console.log(`| ${s.seconds.toFixed(0)} | ${s.done} | ${s.pid} | ${s.rssMiB.toFixed(1)} | ${s.fds} |`);
    nextRow = Math.floor(s.done / 25) * 25 + 25;
  }
  // After warm-up (the first quarter of the jobs): the later half of the samples against the earlier.
  const steady = samples.filter((s) => s.done >= SOAK_JOBS / 4);
  const half = Math.floor(steady.length / 2);
  const rssGrowth =
    half > 0
      ? median(steady.slice(half).map((s) => s.rssMiB)) / median(steady.slice(0, half).map((s) => s.rssMiB))
      : NaN;
  const fdSpread = Math.max(...samples.slice(1).map((s) => s.fds)) - Math.min(...samples.slice(1).map((s) => s.fds));
  const restarted = new Set(samples.map((s) => s.pid)).size > 1;
  const seconds = (Date.now() - started) / 1000;
  console.log(
    `\njobs: ${counts.completed} completed, ${counts.ended - counts.completed} failed or cancelled, ${counts.jobs - counts.ended} not ended, in ${seconds.toFixed(0)} s`,
  );
  console.log(
    `RSS after warm-up, median of the later half of the samples over the earlier half: ${rssGrowth.toFixed(2)} (${steady.length} samples); ` +
      `open fds ranged over ${fdSpread}; encoder restarted: ${restarted}`,
  );
  const bounded = rssGrowth < 1.25 && fdSpread <= 10 && !restarted && counts.completed === SOAK_JOBS;
  console.log(
    `verdict: ${bounded ? "bounded (RSS grew less than 25% after warm-up, fds within 10, no restart, every job completed)" : "NOT BOUNDED"}`,
  );
  return {
    seconds,
    completed: counts.completed,
    failedOrCancelled: counts.ended - counts.completed,
    notEnded: counts.jobs - counts.ended,
    samples: samples.map((s) => ({ ...s, seconds: Math.round(s.seconds), rssMiB: Math.round(s.rssMiB * 10) / 10 })),
    rssGrowth,
    fdSpread,
    restarted,
    bounded,
  };
}

const sources = await mkdtemp(join(tmpdir(), "bench-load-sources-"));
await makeSource(join(sources, "tiny.mp4"), { seconds: 1, width: 160, height: 90, fps: 15 });
const files = await startFileServer({ files: [join(sources, "tiny.mp4")] });
const devLog = join(tmpdir(), `bench-load-dev-${Date.now()}.log`);
const dev = await startDevService(devLog);
try {
  const source = files.url("tiny.mp4");
  const figures = {
    ...(runSoak ? { soak: await soak(dev, source) } : {}),
    ...(runLoad ? { load: await load(dev, source) } : {}),
  };
  recordRun(
    "load",
    { phases: [runSoak && "soak", runLoad && "load"].filter(Boolean), LOAD_CLIENTS, LOAD_SECONDS, SOAK_JOBS },
    figures,
  );
} finally {
  await dev.stop();
  await files.stop();
  await rm(sources, { recursive: true, force: true });
  console.log(`\nnpm run dev's output: ${devLog}`);
}
