import { eq } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";
import { sessions, users } from "../../drizzle/schema";
import { tokenDigest } from "../../worker/dashboard/auth/tokens";
import { expectStatus } from "../support/api-client";
import { admin, api, createJob } from "./harness";
import { DashboardSession, formToken, signedUp } from "./dashboard-session";
import { completeWith, storedZip } from "./dashboard-outputs";

interface Owner {
  session: DashboardSession;
  email: string;
  key: string;
  keyId: string;
  jobId: string;
  zipJobId: string;
}

/** An account with a key, a completed MP4 job and a completed HLS job: everything another account must not reach. */
async function owner(): Promise<Owner> {
  const { session, email } = await signedUp();
  const [user] = await admin.db.select().from(users).where(eq(users.email, email));
  const key = await session.createKey("owner's key");
  const keyId = /data-key-id="([^"]+)"/.exec((await session.get("/dashboard/keys")).html)![1];
  const job = await createJob(key);
  await completeWith(job.id, user.accountId, "mp4_264_720p.mp4", Buffer.from("owner's video"), "video/mp4");
  const zipJob = await createJob(key, "hls_abr_264_basic");
  await completeWith(
    zipJob.id,
    user.accountId,
    "hls_abr_264_basic.zip",
    await storedZip({ "master.m3u8": "#EXTM3U\n" }),
    "application/zip",
  );
  return { session, email, key, keyId, jobId: job.id, zipJobId: zipJob.id };
}

let a: Owner;
let b: Owner;
beforeAll(async () => {
  [a, b] = await Promise.all([owner(), owner()]);
});

describe("dashboard: one account never sees another's keys or jobs", () => {
  it("every job route answers 404 for the other account's job ids", async () => {
    const routes = (id: string) => [
      `/dashboard/jobs/${id}`,
      `/dashboard/jobs/${id}/download`,
      `/dashboard/jobs/${id}/output`,
      `/dashboard/jobs/${id}/files/master.m3u8`,
    ];
    for (const path of [...routes(a.jobId), ...routes(a.zipJobId)]) {
      const res = await b.session.get(path);
      expect(res.status, path).toBe(404);
      expect(res.html, path).not.toContain("owner&#39;s video");
      expect(res.location, path).toBeNull();
    }
    // The owner reaches the same routes.
    expect((await a.session.get(`/dashboard/jobs/${a.jobId}/output`)).html).toBe("owner's video");
    expect((await a.session.get(`/dashboard/jobs/${a.zipJobId}/files/master.m3u8`)).status).toBe(200);
  });

  it("lists show only the account's own jobs and keys", async () => {
    const jobs = await b.session.get("/dashboard/jobs");
    expect(jobs.html).toContain(b.jobId);
    expect(jobs.html).not.toContain(a.jobId);
    expect(jobs.html).not.toContain(a.zipJobId);
    const table = await b.session.get("/dashboard/jobs/table");
    expect(table.html).not.toContain(a.jobId);
    const keys = await b.session.get("/dashboard/keys");
    expect(keys.html).toContain(b.keyId);
    expect(keys.html).not.toContain(a.keyId);
  });

  it("the other account's key can be neither shown for revocation nor revoked", async () => {
    expect((await b.session.get(`/dashboard/keys/${a.keyId}/revoke`)).status).toBe(404);
    const token = formToken((await b.session.get("/dashboard/keys")).html);
    const res = await b.session.post(`/dashboard/keys/${a.keyId}/revoke`, { _csrf: token });
    expect(res.status).toBe(404);
    expect((await api(a.key).listJobs()).status).toBe(200);
  });

  it("a session cookie belongs to one account: altered, swapped for the session's id, or sent with the API, it grants nothing", async () => {
    const token = a.session.sessionToken();
    const [row] = await admin.db
      .select()
      .from(sessions)
      .where(eq(sessions.tokenHash, await tokenDigest(token)));
    const tampered = [
      token.slice(0, -1) + (token.endsWith("A") ? "B" : "A"),
      token.toUpperCase(),
      row.id,
      row.tokenHash,
      `${token}x`,
      "",
    ];
    for (const value of tampered) {
      const forged = new DashboardSession();
      forged.cookies.set("vep_session", value);
      const res = await forged.get("/dashboard/jobs");
      expect(res.status, value).toBe(303);
      expect(res.location).toBe("/dashboard/signin");
    }
    // Two session cookies at once: the first wins, and it still shows only its own account.
    const both = await fetch(`${a.session.origin}/dashboard/jobs`, {
      headers: { Cookie: `vep_session=${b.session.sessionToken()}; vep_session=${token}` },
      redirect: "manual",
    });
    const html = await both.text();
    expect(html.includes(a.jobId) && html.includes(b.jobId)).toBe(false);
    // A dashboard session is not an API credential.
    const viaApi = await api().listJobs({}, { headers: { Cookie: `vep_session=${token}` } });
    expectStatus(viaApi, 401);
  });
});
