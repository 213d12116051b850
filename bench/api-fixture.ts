/**
 * What bench:api and bench:profile measure against: the Worker as `npm run dev` serves it, on a
 * scratch database of the machine's PostgreSQL, with a delivery sink where the encoder goes (so
 * no encoding competes for the CPU); an account with twenty queued jobs and one completed one (a
 * stored output, for reads that sign a link), another with ten completed jobs (a page whose every
 * item signs a link); and the routes to drive, with the bare route first.
 */
import { AwsClient } from "aws4fetch";
import { openAdmin } from "../dev/admin/commands";
import { signInternal } from "../domain/internal-auth";
import { outputKeyFor } from "../domain/jobs";
import { s3ObjectUrl } from "../domain/s3";
import { startDeliverySink } from "../test/api/setup/delivery-sink";
import { startTestStack } from "../test/support/stack";

export const BASELINE = "GET /healthz (baseline)";

export const ROUTE_IDS = ["healthz", "job", "list", "create", "completed", "completed-list"] as const;

/** A route to drive: its short id (bench:profile's argument), its name in the tables, autocannon's options. */
interface RouteCase {
  id: (typeof ROUTE_IDS)[number];
  name: string;
  opts: { url: string; method?: string; headers?: Record<string, string>; body?: string };
}

export async function startApiFixture(opts: { workerInspectorPort?: number } = {}) {
  const sink = await startDeliverySink();
  const stack = await startTestStack(
    { kind: "external", url: sink.url },
    { workerInspectorPort: opts.workerInspectorPort },
  );
  const stop = async () => {
    await stack.stop();
    await sink.stop();
  };
  try {
    const { cloud } = stack.info;
    const admin = openAdmin({ databaseUrl: stack.info.databaseUrl, redis: cloud.redis });
    const { apiKey, accountId } = await admin.createAccount("enterprise");
    const finisher = await admin.createAccount("enterprise");
    // The creations go to an account of their own, so the pages read stay the same all run long.
    const creator = await admin.createAccount("enterprise");
    await admin.close();
    const headers = { Authorization: `Bearer ${apiKey}`, "Content-Type": "application/json" };
    const creatorHeaders = { ...headers, Authorization: `Bearer ${creator.apiKey}` };
    const base = stack.info.apiUrl;
    const createBody = JSON.stringify({ inputUrl: "https://media.example.com/a.mp4", preset: "mp4_264_720p" });
    const finisherHeaders = { ...headers, Authorization: `Bearer ${finisher.apiKey}` };
    const create = async (as = headers) => {
      const res = await fetch(`${base}/api/v1/jobs`, { method: "POST", headers: as, body: createBody });
      return ((await res.json()) as { id: string }).id;
    };

    // Some history so the list has a full page to render.
    let jobId = "";
    for (let i = 0; i < 20; i++) jobId = await create();

    // One completed job, played through the internal API as the encoder would, for reads that sign a link.
    const completedId = await create();
    const internal = async (path: string, body: unknown) => {
      const raw = JSON.stringify(body);
      const signed = await signInternal(stack.info.internalSecret, {
        method: "POST",
        path: `/internal${path}`,
        body: raw,
      });
      const res = await fetch(`${base}/internal${path}`, {
        method: "POST",
        headers: { "Content-Type": "application/json", ...signed },
        body: raw,
      });
      if (!res.ok) throw new Error(`${path}: ${res.status} ${await res.text()}`);
    };
    const s3 = new AwsClient({
      accessKeyId: cloud.s3.accessKeyId,
      secretAccessKey: cloud.s3.secretAccessKey,
      service: "s3",
      region: cloud.s3.region,
    });
    const complete = async (id: string, account: string) => {
      const key = outputKeyFor(account, id, "output.mp4");
      await internal(`/jobs/${id}/claim`, { dispatch: 0 });
      await s3.fetch(s3ObjectUrl(cloud.s3.endpoint, cloud.s3.bucket, key), { method: "PUT", body: "bench output" });
      await internal(`/jobs/${id}/complete`, { claim: 1, outputKey: key, duration: 10 });
      return key;
    };
    const outputKey = await complete(completedId, accountId);
    for (let i = 0; i < 10; i++) await complete(await create(finisherHeaders), finisher.accountId);

    const routes: RouteCase[] = [
      { id: "healthz", name: BASELINE, opts: { url: `${base}/healthz` } },
      { id: "job", name: "GET /jobs/{id}", opts: { url: `${base}/api/v1/jobs/${jobId}`, headers } },
      {
        id: "list",
        name: "GET /jobs (a page of 10, one completed: its link signed)",
        opts: { url: `${base}/api/v1/jobs?limit=10`, headers },
      },
      {
        id: "create",
        name: "POST /jobs",
        opts: { url: `${base}/api/v1/jobs`, method: "POST", headers: creatorHeaders, body: createBody },
      },
      {
        id: "completed",
        name: "GET /jobs/{id} (completed: HEAD remembered, link signed)",
        opts: { url: `${base}/api/v1/jobs/${completedId}`, headers },
      },
      {
        id: "completed-list",
        name: "GET /jobs (a page of 10, all completed: ten links signed)",
        opts: { url: `${base}/api/v1/jobs?limit=10`, headers: finisherHeaders },
      },
    ];
    return {
      stack: stack.info,
      base,
      headers,
      creatorHeaders,
      createBody,
      jobId,
      completedId,
      outputKey,
      routes,
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}
