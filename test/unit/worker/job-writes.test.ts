import { readdir, readFile } from "node:fs/promises";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const worker = resolve(dirname(fileURLToPath(import.meta.url)), "../../../worker");
/** The job state table: a folder of one concern a file (its index says which). */
const STATE_TABLE = "lib/job-states/";
/**
 * A split job's parts' state table (docs/scaling.md): its statements move the job with its part
 * (to its join, or failed), in the same statement, so they write the jobs table too.
 */
const PART_STATE_TABLE = "lib/part-states.ts";

/** A write to the jobs table: drizzle's builders on `jobs`, or SQL text naming it. */
const JOB_WRITE =
  /\.(update|insert|delete)\(\s*jobs\s*\)|\b(update|insert\s+into|delete\s+from)\s+(\$\{\s*jobs\s*\}|"?jobs"?\b)/gi;

const writesIn = (source: string) => [...source.matchAll(JOB_WRITE)].map((m) => m[0]);

/** Whether a module (its path under worker/) may write the jobs table. */
const mayWriteJobs = (file: string) => file.startsWith(STATE_TABLE) || file === PART_STATE_TABLE;

interface Module {
  file: string;
  source: string;
}

/** The writes of the jobs table in modules that may not make them, by module. */
const strayWrites = (modules: Module[]) =>
  modules
    .filter(({ file }) => !mayWriteJobs(file))
    .map(({ file, source }) => ({ file, writes: writesIn(source) }))
    .filter(({ writes }) => writes.length > 0);

describe("a job's status is written in one module of the Worker", () => {
  it(`no module but those in ${STATE_TABLE} (and ${PART_STATE_TABLE}) writes the jobs table`, async () => {
    const entries = await readdir(worker, { recursive: true, withFileTypes: true });
    const files = entries.filter((e) => e.isFile() && /\.tsx?$/.test(e.name)).map((e) => join(e.parentPath, e.name));
    const modules = await Promise.all(
      files.map(async (file) => ({ file: relative(worker, file), source: await readFile(file, "utf8") })),
    );
    // The scan reads the state table's own writes (its moves, creation's insert, the bookkeeping),
    // so an empty result elsewhere means something.
    const tableWrites = modules.filter(({ file }) => file.startsWith(STATE_TABLE)).flatMap((m) => writesIn(m.source));
    expect(tableWrites.length).toBeGreaterThan(2);
    expect(tableWrites.some((w) => /insert/i.test(w))).toBe(true);
    expect(strayWrites(modules)).toEqual([]);
  });

  it("the scan sees each form of write", () => {
    expect(writesIn("db.update(jobs).set({ status })")).toHaveLength(1);
    expect(writesIn("tx.insert( jobs ).values(row)")).toHaveLength(1);
    expect(writesIn("db.delete(jobs)")).toHaveLength(1);
    // biome-ignore lint/suspicious/noTemplateCurlyInString: the source text of a tagged template, for the scan to read.
    expect(writesIn("sql`update ${jobs} set status = 'cancelled'`")).toHaveLength(1);
    // biome-ignore lint/suspicious/noTemplateCurlyInString: the source text of a tagged template, for the scan to read.
    expect(writesIn("sql`insert into ${jobs} (status) values ('queued')`")).toHaveLength(1);
    expect(writesIn('sql`UPDATE "jobs" SET status = $1`')).toHaveLength(1);
    expect(writesIn("db.select().from(jobs).where(eq(jobs.status, 'queued'))")).toEqual([]);
  });

  it("a write beside the state table's folder is stray, one in it or in the parts' module is not", () => {
    const write = "db.update(jobs).set({ status })";
    const elsewhere = ["lib/job-states.ts", "lib/job-states-old/move.ts", "lib/sweep.ts", "routes/jobs/cancel.ts"];
    const modules = [
      ...["lib/job-states/move.ts", "lib/job-states/create.ts", PART_STATE_TABLE].map((file) => ({
        file,
        source: write,
      })),
      ...elsewhere.map((file) => ({ file, source: write })),
    ];
    expect(strayWrites(modules).map((m) => m.file)).toEqual(elsewhere);
  });
});
