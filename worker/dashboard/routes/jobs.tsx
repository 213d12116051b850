import { count, desc, eq } from "drizzle-orm";
import { Hono, type Context } from "hono";
import { type Job, jobs } from "../../../drizzle/schema";
import { isCancellable } from "../../../domain/jobs";
import { findOwnJob } from "../../lib/find-job";
import { outputState } from "../../lib/output-links";
import { type PlaybackLink, playbackLink } from "../../lib/playback-links";
import { me, type DashboardEnv } from "../context";
import { memberContentType, playbackOf, readableOutputKey, streamPlayerOf } from "../lib/playback";
import { findZipMember, ObjectNotFoundError } from "../lib/zip-members";
import { MessagePage } from "../pages/errors";
import { JobPage, JobPanel, JOBS_PER_PAGE, JobsTable } from "../pages/jobs";
import { notFoundPage, renderPage } from "../pages/render";

type Ctx = Context<DashboardEnv>;

/** A signed link to read the output from inside the Worker; a few minutes is plenty for one request. */
const INTERNAL_LINK_SECONDS = 300;
/**
 * Outputs are the account's own, behind its session: a copy the browser kept would outlive the
 * session, and the next person at a shared computer could open it from the history after sign-out.
 */
const OUTPUT_CACHE = "no-store";

async function jobsPage(c: Ctx) {
  const { db } = c.get("services");
  const accountId = me(c).account.id;
  const requested = Number.parseInt(c.req.query("page") ?? "1", 10);
  const [{ total }] = await db.select({ total: count() }).from(jobs).where(eq(jobs.accountId, accountId));
  const totalPages = Math.max(1, Math.ceil(total / JOBS_PER_PAGE));
  const page = Number.isSafeInteger(requested) ? Math.min(Math.max(requested, 1), totalPages) : 1;
  const rows = await db
    .select()
    .from(jobs)
    .where(eq(jobs.accountId, accountId))
    .orderBy(desc(jobs.createdAt), desc(jobs.id))
    .limit(JOBS_PER_PAGE)
    .offset((page - 1) * JOBS_PER_PAGE);
  return <JobsTable jobs={rows} page={page} totalPages={totalPages} />;
}

/** The signed-in account's job `id`, or undefined (unknown, malformed, or another account's). */
function ownJob(c: Ctx) {
  return findOwnJob(c.get("services").db, me(c).account.id, c.req.param("id") ?? "");
}

const NO_OUTPUT: Record<"not-ready" | "missing" | "legacy", string> = {
  "not-ready": "This job has no output yet.",
  missing: "This job's output has been removed from storage.",
  legacy: "This job's output was stored under an older storage layout and can no longer be signed. Run the job again.",
};

/** What a job's page shows of it besides its row: its output's signed link, and its stream's playback link. */
async function jobLinks(c: Ctx, job: Job) {
  const services = c.get("services");
  const { plan } = me(c).account;
  const [output, stream] = await Promise.all([outputState(services, job, plan), playbackLink(services.env, job, plan)]);
  return { link: output.kind === "signed" ? output.link : null, stream };
}

/**
 * The players a job's page loads: its output's, and its stream's while it has one or may yet
 * (a page open before the stream plays takes its player in with a refresh).
 */
function playersOf(job: Job, stream: PlaybackLink | null) {
  const player = stream || isCancellable(job.status) ? streamPlayerOf(job.preset) : null;
  return { hls: player === "hls" || playbackOf(job).kind === "hls", dash: player === "dash" };
}

/** A short-lived signed link to `key`, for the Worker's own reads on the page's behalf. */
const internalLink = async (c: Ctx, key: string) =>
  (await c.get("services").storage.signGet(key, INTERNAL_LINK_SECONDS)).url;

/**
 * The object at `key`, read through its signed link `url` and streamed from the Worker, so the
 * page needs no other origin. Range requests pass through so players can seek.
 */
async function streamObject(c: Ctx, url: string, key: string, disposition: "inline" | "attachment") {
  const range = c.req.header("Range");
  const res = await fetch(url, { headers: range ? { Range: range } : {} });
  if (!res.ok) {
    await res.body?.cancel();
    if (res.status === 404) return notFoundPage(c, "Output");
    // A range past the end is the client's to hear about, as storage said it.
    if (res.status === 416)
      return new Response(null, {
        status: 416,
        headers: { "Content-Range": res.headers.get("Content-Range") ?? "bytes */*" },
      });
    throw new Error(`Storage GET ${key} answered ${res.status}`);
  }
  const fileName = key.slice(key.lastIndexOf("/") + 1);
  const headers = new Headers({
    "Cache-Control": OUTPUT_CACHE,
    "Accept-Ranges": "bytes",
    "Content-Disposition": `${disposition}; filename="${fileName}"`,
  });
  for (const name of ["Content-Type", "Content-Length", "Content-Range"]) {
    const value = res.headers.get(name);
    if (value) headers.set(name, value);
  }
  return new Response(res.body, { status: res.status, headers });
}

export const jobRoutes = new Hono<DashboardEnv>()
  .get("/jobs", async (c) => renderPage(c, { title: "Jobs", hls: true, body: await jobsPage(c) }))
  .get("/jobs/table", async (c) => c.html(await jobsPage(c)))
  .get("/jobs/:id", async (c) => {
    const job = await ownJob(c);
    if (!job) return notFoundPage(c, "Job");
    const { link, stream } = await jobLinks(c, job);
    return renderPage(c, {
      title: `Job ${job.preset}`,
      ...playersOf(job, stream),
      body: <JobPage job={job} link={link} stream={stream} />,
    });
  })
  .get("/jobs/:id/panel", async (c) => {
    const job = await ownJob(c);
    if (!job) return notFoundPage(c, "Job");
    const { link, stream } = await jobLinks(c, job);
    return c.html(<JobPanel job={job} link={link} stream={stream} />);
  })
  .get("/jobs/:id/download", async (c) => {
    const job = await ownJob(c);
    if (!job) return notFoundPage(c, "Job");
    const output = await outputState(c.get("services"), job, me(c).account.plan);
    if (output.kind !== "signed")
      return renderPage(c, { title: "No download", body: <MessagePage message={NO_OUTPUT[output.kind]} /> }, 404);
    // The link outputState signed after its HEAD serves the download too.
    return streamObject(c, output.link.url, output.key, "attachment");
  })
  .get("/jobs/:id/output", async (c) => {
    const key = readableOutputKey(await ownJob(c));
    if (!key) return notFoundPage(c, "Output");
    return streamObject(c, await internalLink(c, key), key, "inline");
  })
  .get("/jobs/:id/files/:name{.+}", async (c) => {
    const key = readableOutputKey(await ownJob(c));
    if (!key?.endsWith(".zip")) return notFoundPage(c, "Output");
    const name = c.req.param("name");
    try {
      const member = await findZipMember(await internalLink(c, key), name);
      if (!member) return notFoundPage(c, "File");
      return new Response(await member.stream(), {
        headers: {
          "Content-Type": memberContentType(name),
          "Content-Length": String(member.size),
          "Cache-Control": OUTPUT_CACHE,
        },
      });
    } catch (err) {
      if (err instanceof ObjectNotFoundError) return notFoundPage(c, "Output");
      throw err;
    }
  });
