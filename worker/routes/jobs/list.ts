import { createRoute, type OpenAPIHono } from "@hono/zod-openapi";
import { and, count, desc, eq, getTableColumns, sql, type SQL } from "drizzle-orm";
import { jobs } from "../../../drizzle/schema";
import type { AppEnv } from "../../context";
import { outputState } from "../../lib/output-links";
import { requireCaller } from "../../middleware/auth";
import { authenticated, jsonResponse } from "../../openapi/common";
import { authenticatedErrors } from "../../openapi/errors";
import { operation } from "../../openapi/route";
import { jobListExamples } from "./examples";
import { API_PREFIX, presentListItem } from "./present";
import { JobList, listJobsQuery } from "./schema";

/** Postgres text cannot hold NUL, so such a filter value is sent as "matches nothing", not as a query that fails. */
function exactMatch(column: typeof jobs.status | typeof jobs.preset, value: string): SQL {
  return value.includes("\u0000") ? sql`false` : eq(column, value);
}

export const listJobsRoute = createRoute({
  method: "get",
  path: "/jobs",
  tags: ["Jobs"],
  operationId: "listJobs",
  summary: "List jobs",
  description:
    "The caller's jobs, newest first, a page at a time, with a signed link for every completed job on the page. No query string is ever refused: bad values fall back to their defaults.",
  security: authenticated,
  middleware: [requireCaller] as const,
  request: { query: listJobsQuery },
  responses: {
    200: jsonResponse("A page of jobs.", JobList, jobListExamples),
    ...authenticatedErrors,
  },
});

export function registerListJobs(app: OpenAPIHono<AppEnv>) {
  operation(app, listJobsRoute, async (c) => {
    const caller = c.get("caller");
    const { db, storage } = c.get("services");
    const { page, limit, status, preset } = listJobsQuery.parse(c.req.query());

    const filters: SQL[] = [eq(jobs.accountId, caller.accountId)];
    if (status !== undefined) filters.push(exactMatch(jobs.status, status));
    if (preset !== undefined) filters.push(exactMatch(jobs.preset, preset));
    const where = and(...filters);

    // The total rides along as a window count: one query, so one connection per request.
    const rows = await db
      .select({ ...getTableColumns(jobs), total: sql<number>`count(*) over()`.mapWith(Number) })
      .from(jobs)
      .where(where)
      .orderBy(desc(jobs.createdAt), desc(jobs.id))
      .limit(limit)
      .offset((page - 1) * limit);
    // A page past the end has no row to carry the total; only then is it counted on its own.
    const total = rows[0]?.total ?? (page > 1 ? (await db.select({ total: count() }).from(jobs).where(where))[0].total : 0);
    const items = await Promise.all(
      rows.map(async (job) => presentListItem(job, await outputState(storage, job, caller.plan))),
    );

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
