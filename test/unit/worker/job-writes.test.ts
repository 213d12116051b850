import { readdir, readFile } from "node:fs/promises";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const worker = resolve(dirname(fileURLToPath(import.meta.url)), "../../../worker");
const STATE_TABLE = "lib/job-states.ts";
/**
 * A split job's parts' state table (docs/scaling.md): its statements move the job with its part
 * (to its join, or failed), in the same statement, so they write the jobs table too.
 */
const PART_STATE_TABLE = "lib/part-states.ts";

/** A write to the jobs table: drizzle's builders on `jobs`, or SQL text naming it. */
const JOB_WRITE =
  /\.(update|insert|delete)\(\s*jobs\s*\)|\b(update|insert\s+into|delete\s+from)\s+(\$\{\s*jobs\s*\}|"?jobs"?\b)/gi;

const writesIn = (source: string) => [...source.matchAll(JOB_WRITE)].map((m) => m[0]);

describe("a job's status is written in one module of the Worker", () => {
  it(`no module but ${STATE_TABLE} (and ${PART_STATE_TABLE}) writes the jobs table`, async () => {
    const entries = await readdir(worker, { recursive: true, withFileTypes: true });
    const files = entries.filter((e) => e.isFile() && /\.tsx?$/.test(e.name)).map((e) => join(e.parentPath, e.name));
    const writes = await Promise.all(
      files.map(async (file) => ({ file: relative(worker, file), writes: writesIn(await readFile(file, "utf8")) })),
    );
    // The scan reads the state table's own writes, so an empty result elsewhere means something.
    expect(writes.find((w) => w.file === STATE_TABLE)?.writes.length).toBeGreaterThan(2);
    expect(writes.filter((w) => ![STATE_TABLE, PART_STATE_TABLE].includes(w.file) && w.writes.length)).toEqual([]);
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
});
