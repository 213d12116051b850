/**
 * npm run bench:hostile-edl — what hostile timelines cost the Worker's request path, against a
 * valid 5-clip timeline measured in the same run: the text checked for nesting and size, parsed,
 * validated, and the answer serialised. Prints milliseconds per request (median of the rounds),
 * the ratio to the baseline, the errors answered and the size of the answer.
 */
import { validateEdl } from "../domain/edl/validate";
import { jsonShapeProblem } from "../worker/lib/json-limits";
import { BODY_LIMITS } from "../worker/middleware/body-limit";
import { recordRun } from "./results";

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);

const timeline = (clips: unknown[]) => ({ version: "1.0", timeline: { tracks: [{ type: "video", clips }] } });
const clip = (i: number, startTime = i) => ({
  id: `c${i}`,
  src: "https://media.example.com/a.mp4",
  in: 0,
  out: 1,
  startTime,
});

const CASES: [string, string][] = [
  ["valid 5 clips, free plan (baseline)", JSON.stringify(timeline(Array.from({ length: 5 }, (_, i) => clip(i))))],
  ["100,000 empty clips, free plan", JSON.stringify(timeline(Array.from({ length: 100_000 }, () => ({}))))],
  // As many as fit in the timeline body limit (100,000 of them would be a 413 unread).
  [
    "45,000 overlapping valid clips, free plan",
    JSON.stringify(timeline(Array.from({ length: 45_000 }, (_, i) => clip(i, 0)))),
  ],
  [
    "1,000 empty clips (the most read one by one), enterprise",
    JSON.stringify(timeline(Array.from({ length: 1000 }, () => ({})))),
  ],
  ["4 MiB of empty objects", `[${Array.from({ length: 1_300_000 }, () => "{}").join(",")}]`],
  ["100,000 levels of nesting", `${"[".repeat(100_000)}${"]".repeat(100_000)}`],
];

/** The Worker's path for one PUT /edl body: refused on its size or shape, or parsed, validated and answered. */
function handle(text: string, plan: "free" | "enterprise"): { errors: number; bytes: number } {
  if (new TextEncoder().encode(text).length > BODY_LIMITS.timeline)
    throw new Error("over the timeline body limit: the Worker answers 413 without reading it");
  const problem = jsonShapeProblem(text);
  if (problem) return { errors: 1, bytes: JSON.stringify({ error: "Invalid JSON", message: problem }).length };
  const result = validateEdl(JSON.parse(text), plan);
  return { errors: result.errors.length, bytes: JSON.stringify(result).length };
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

const rows = CASES.map(([name, text]) => {
  const plan = name.includes("enterprise") ? "enterprise" : "free";
  const times: number[] = [];
  let outcome = { errors: 0, bytes: 0 };
  for (let round = 0; round < ROUNDS; round++) {
    const started = performance.now();
    outcome = handle(text, plan);
    times.push(performance.now() - started);
  }
  return { name, ms: median(times), ...outcome, body: text.length };
});

const baseline = rows[0].ms;
console.log(`| case | body | ms | ratio to baseline | errors | answer |`);
console.log(`|---|---|---|---|---|---|`);
for (const row of rows) {
  const kib = (n: number) => `${(n / 1024).toFixed(1)} KiB`;
  console.log(
    `| ${row.name} | ${kib(row.body)} | ${row.ms.toFixed(2)} | ${(row.ms / baseline).toFixed(2)} | ${row.errors} | ${kib(row.bytes)} |`,
  );
}
recordRun(
  "hostile-edl",
  { rounds: ROUNDS },
  {
    cases: rows.map(({ name, body, ms, errors, bytes }) => ({
      case: name,
      bodyBytes: body,
      ms,
      ratio: ms / baseline,
      errors,
      answerBytes: bytes,
    })),
  },
);
