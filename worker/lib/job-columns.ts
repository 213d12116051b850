/**
 * The columns a job's read and a page of jobs select, in one place so that the statements that
 * read them with the key's check and the presenters (routes/jobs/present.ts) agree.
 */
import { getTableColumns } from "drizzle-orm";
import { jobs, type Job as JobRow } from "../../drizzle/schema";

const allJobColumns = getTableColumns(jobs);
/** The jobs table's columns of these names, to select just them. */
function jobColumnsNamed<K extends keyof typeof allJobColumns>(names: readonly K[]) {
  return Object.fromEntries(names.map((name) => [name, allJobColumns[name]])) as Pick<typeof allJobColumns, K>;
}

/** What a list item is made of: the columns GET /jobs reads. */
const LISTED = [
  "id",
  "status",
  "preset",
  "inputUrl",
  "duration",
  "errorMessage",
  "createdAt",
  "startedAt",
  "completedAt",
  "storageLayout",
  "outputKey",
  "playableAt",
] as const satisfies readonly (keyof JobRow)[];
export type ListedJob = Pick<JobRow, (typeof LISTED)[number]>;
export const listedColumns = jobColumnsNamed(LISTED);

/**
 * What a job's answer is made of: the columns GET /jobs/{id} and its download-url read. Neither
 * reads the timeline (`edl`), which can be far larger than the answer, nor the bookkeeping columns.
 */
const PRESENTED = [
  ...LISTED,
  "retryCount",
  "progress",
  "clientMetadata",
  "lastCheckedAt",
] as const satisfies readonly (keyof JobRow)[];
export type PresentedJob = Pick<JobRow, (typeof PRESENTED)[number]>;
export const presentedColumns = jobColumnsNamed(PRESENTED);
