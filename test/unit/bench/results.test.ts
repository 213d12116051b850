import { mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { appendRun, runRecord, tableRecords } from "../../../bench/results";

const RESULTS = resolve(import.meta.dirname, "../../../bench/results");
const DATE = /^\d{4}-\d{2}-\d{2}$/;

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "bench-results-"));
});
afterAll(() => rm(dir, { recursive: true, force: true }));

describe("a bench's results line (bench/results.ts)", () => {
  it("appends one JSON line per run: the day, HEAD, the host, the settings and the figures", async () => {
    const first = runRecord({ rounds: 2 }, { ratio: 0.58 }, new Date("2026-11-29T19:11:00Z"));
    appendRun("split", first, dir);
    appendRun("split", runRecord({ rounds: 4 }, { ratio: 0.59 }), dir);
    const lines = (await readFile(join(dir, "split.jsonl"), "utf8")).split("\n");
    expect(lines).toHaveLength(3);
    expect(lines[2]).toBe("");
    const [read, next] = lines.slice(0, 2).map((line) => JSON.parse(line));
    expect(read).toEqual(first);
    expect(read).toMatchObject({ date: "2026-11-29", settings: { rounds: 2 }, figures: { ratio: 0.58 } });
    expect(read.commit).toMatch(/^[0-9a-f]{12}$/);
    expect(read.host.cores).toBeGreaterThan(0);
    expect(read.host.loadAverage).toHaveLength(3);
    expect(next.figures).toEqual({ ratio: 0.59 });
  });

  it("reads a printed table as rows keyed by its header, numbers as numbers", () => {
    const table = [
      ["route", "req/s", "ratios by round", "p99 ms"],
      ["GET /jobs/{id}", "1412", "0.31 0.27 0.29", 29],
    ];
    expect(tableRecords(table)).toEqual([
      { route: "GET /jobs/{id}", "req/s": 1412, "ratios by round": "0.31 0.27 0.29", "p99 ms": 29 },
    ]);
  });
});

describe("the committed results files", () => {
  it("hold one JSON object per line, each dated", async () => {
    const files = (await readdir(RESULTS)).filter((name) => name.endsWith(".jsonl"));
    expect(files).toEqual(expect.arrayContaining(["api.jsonl", "encode.jsonl", "split.jsonl", "edl.jsonl"]));
    for (const file of files) {
      const text = await readFile(join(RESULTS, file), "utf8");
      expect(text.endsWith("\n"), file).toBe(true);
      for (const line of text.trimEnd().split("\n")) expect(JSON.parse(line).date, `${file}: ${line}`).toMatch(DATE);
    }
  });
});
