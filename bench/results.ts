/**
 * The history of a bench's runs: each run appends one JSON line to bench/results/<bench>.jsonl,
 * committed with the code it measured. docs/benchmarks.md holds only the latest figures.
 */
import { execFileSync } from "node:child_process";
import { appendFileSync, mkdirSync } from "node:fs";
import { availableParallelism, cpus, loadavg } from "node:os";
import { join } from "node:path";

const RESULTS_DIR = join(import.meta.dirname, "results");

/** What the machine was when the run ended: the ratios are only comparable between like hosts. */
interface Host {
  cores: number;
  cpu: string;
  /** The 1, 5 and 15 minute load averages. */
  loadAverage: number[];
  node: string;
}

interface RunRecord {
  /** The run's day (UTC), YYYY-MM-DD. */
  date: string;
  /** HEAD when the run ended; the tree may have held changes besides. */
  commit?: string;
  host: Host;
  /** The knobs the run was started with (rounds, seconds, the phase), defaults included. */
  settings: Record<string, unknown>;
  figures: Record<string, unknown>;
}

const round2 = (n: number) => Math.round(n * 100) / 100;

function headCommit(): string | undefined {
  try {
    const out = execFileSync("git", ["rev-parse", "--short=12", "HEAD"], {
      cwd: import.meta.dirname,
      encoding: "utf8",
      stdio: ["ignore", "pipe", "ignore"],
    });
    return out.trim() || undefined;
  } catch {
    // Not a checkout, or no git: the date and the host still place the run.
    return undefined;
  }
}

/** The line a run appends: its figures, its settings and the host it ran on. */
export function runRecord(
  settings: Record<string, unknown>,
  figures: Record<string, unknown>,
  now = new Date(),
): RunRecord {
  return {
    date: now.toISOString().slice(0, 10),
    commit: headCommit(),
    host: {
      cores: availableParallelism(),
      cpu: cpus()[0]?.model.trim() ?? "unknown",
      loadAverage: loadavg().map(round2),
      node: process.version,
    },
    settings,
    figures,
  };
}

/** Appends `record` to `<dir>/<bench>.jsonl`; the file's path. */
export function appendRun(bench: string, record: RunRecord, dir = RESULTS_DIR): string {
  mkdirSync(dir, { recursive: true });
  const file = join(dir, `${bench}.jsonl`);
  appendFileSync(file, `${JSON.stringify(record)}\n`);
  return file;
}

/** A printed table (its first row the header) as one object per row, cells that are numbers as numbers. */
export function tableRecords(rows: readonly (readonly (string | number)[])[]): Record<string, string | number>[] {
  const [header, ...body] = rows;
  return body.map((row) =>
    Object.fromEntries(
      header.map((key, i) => {
        const cell = row[i] ?? "";
        return [String(key), typeof cell === "string" && /^-?\d+(\.\d+)?$/.test(cell) ? Number(cell) : cell];
      }),
    ),
  );
}

/** A bench's last step: its run recorded in bench/results/<bench>.jsonl, and where said after its output. */
export function recordRun(bench: string, settings: Record<string, unknown>, figures: Record<string, unknown>): void {
  console.log(`\nThis run's line appended to ${appendRun(bench, runRecord(settings, figures))}`);
}
