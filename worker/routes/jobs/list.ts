import { createRoute, type OpenAPIHono } from "@hono/zod-openapi";
import { and, count, desc, eq, sql, type SQL, type SQLWrapper } from "drizzle-orm";
import { accounts, apiKeys, jobs } from "../../../drizzle/schema";
import type { AppEnv } from "../../context";
import { listedColumns } from "../../lib/job-columns";
import { outputStates } from "../../lib/output-links";
import { playbackLinks } from "../../lib/playback-links";
import { activeKey, callerColumns } from "../../lib/callers";
import { requireCallerIn } from "../../middleware/auth";
import { preparedPerDatabase, type Database } from "../../services/db";
import { authenticated, jsonResponse } from "../../openapi/common";
import { authenticatedErrors } from "../../openapi/errors";
import { operation } from "../../openapi/route";
import { jobListExamples } from "./examples";
import { API_PREFIX, presentListItem } from "./present";
import { JobList, listJobsQuery } from "./schema";

/**
 * How a filter narrows the page: not at all, to an exact value, or to nothing. Postgres text
 * cannot hold NUL, so such a value is "matches nothing", not a query that fails.
 */
type FilterShape = "absent" | "exact" | "nothing";

const shapeOf = (value: string | undefined): FilterShape =>
  value === undefined ? "absent" : value.includes("\u0000") ? "nothing" : "exact";

function filtersOf(
  accountId: SQLWrapper | string,
  status: [FilterShape, SQLWrapper | string],
  preset: [FilterShape, SQLWrapper | string],
): SQL | undefined {
  const filters: SQL[] = [eq(jobs.accountId, accountId)];
  for (const [column, [shape, value]] of [
    [jobs.status, status],
    [jobs.preset, preset],
  ] as const) {
    if (shape !== "absent") filters.push(shape === "nothing" ? sql`false` : eq(column, value));
  }
  return and(...filters);
}

/**
 * The key's caller and the page of its jobs, in one query: the key and its account (the key's
 * rule applied) joined laterally to the page. One row per job, one row with no job for an empty
 * page, no row for a key that does not authenticate. The total rides along as a window count.
 * Only the columns an item shows are read: a timeline job's `edl` can be far larger than its item.
 * Built once per shape of the filters (nine at most) and database client; each request fills in
 * the values.
 */
const pageQueries = preparedPerDatabase((db: Database) => {
  const byShape = new Map<string, ReturnType<typeof buildPageQuery>>();
  function buildPageQuery(status: FilterShape, preset: FilterShape) {
    const page = db
      .select({ ...listedColumns, total: sql<number>`count(*) over()`.mapWith(Number).as("total") })
      .from(jobs)
      .where(filtersOf(accounts.id, [status, sql.placeholder("status")], [preset, sql.placeholder("preset")]))
      .orderBy(desc(jobs.createdAt), desc(jobs.id))
      .limit(sql.placeholder("limit"))
      .offset(sql.placeholder("offset"))
      .as("page");
    const { total, ...jobColumns } = page._.selectedFields;
    return db
      .select({ caller: callerColumns, job: jobColumns, total })
      .from(apiKeys)
      .innerJoin(accounts, eq(accounts.id, apiKeys.accountId))
      .leftJoinLateral(page, sql`true`)
      .where(activeKey(sql.placeholder("hash")))
      .prepare(`list_jobs_${status}_${preset}`);
  }
  return (status: FilterShape, preset: FilterShape) => {
    const key = `${status} ${preset}`;
    let query = byShape.get(key);
    if (!query) {
      query = buildPageQuery(status, preset);
      byShape.set(key, query);
    }
    return query;
  };
});

/** The key checked in the page's own query (requireCallerIn); sets `listed`: the page's jobs and, when it has any, the total. */
const requireCallerWithPage = requireCallerIn(async (c, keyHash) => {
  const query = listJobsQuery.parse(c.req.query());
  const { page, limit, status, preset } = query;
  const rows = await pageQueries(c.get("services").db)(shapeOf(status), shapeOf(preset)).execute({
    hash: keyHash,
    status,
    preset,
    limit,
    offset: (page - 1) * limit,
  });
  if (!rows.length) return undefined;
  const listed = rows.flatMap((row) => (row.job ? [row.job] : []));
  c.set("listed", { query, jobs: listed, total: listed.length ? rows[0].total : undefined });
  return rows[0].caller;
});

const listJobsRoute = createRoute({
  method: "get",
  path: "/jobs",
  tags: ["Jobs"],
  operationId: "listJobs",
  summary: "List jobs",
  description:
    "The caller's jobs, newest first, a page at a time, with a signed link for every completed job on the page. No query string is ever refused: bad values fall back to their defaults.",
  security: authenticated,
  middleware: [requireCallerWithPage] as const,
  request: { query: listJobsQuery },
  responses: {
    200: jsonResponse("A page of jobs.", JobList, jobListExamples),
    ...authenticatedErrors,
  },
});

export function registerListJobs(app: OpenAPIHono<AppEnv>) {
  operation(app, listJobsRoute, async (c) => {
    const caller = c.get("caller");
    const services = c.get("services");
    const { db } = services;
    const { query, jobs: rows, total: pageTotal } = c.get("listed");
    const { page, limit, status, preset } = query;
    // A page past the end has no row to carry the total; only then is it counted on its own.
    const countAll = async () => {
      const where = filtersOf(caller.accountId, [shapeOf(status), status ?? ""], [shapeOf(preset), preset ?? ""]);
      return (await db.select({ total: count() }).from(jobs).where(where))[0].total;
    };
    const total = pageTotal ?? (page > 1 ? await countAll() : 0);
    const [outputs, playbacks] = await Promise.all([
      outputStates(services, rows, caller.plan),
      playbackLinks(services.env, rows, caller.plan),
    ]);
    const items = rows.map((job, i) => presentListItem(job, outputs[i], playbacks[i]));

    const totalPages = Math.ceil(total / limit);
    const pageLink = (n: number) => {
      const params = new URLSearchParams({ page: String(n), limit: String(limit) });
      if (status !== undefined) params.set("status", status);
      if (preset !== undefined) params.set("preset", preset);
      return `${API_PREFIX}/jobs?${params}`;
    };
    return c.json(
      {
        jobs: items,
        pagination: { page, limit, totalPages, totalCount: total, hasNext: page < totalPages, hasPrev: page > 1 },
        links: {
          self: pageLink(page),
          next: page < totalPages ? pageLink(page + 1) : null,
          prev: page > 1 ? pageLink(page - 1) : null,
        },
      },
      200,
    );
  });
}
