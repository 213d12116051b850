import { createServer, type Server } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { INTERNAL_SIGNATURE_HEADER, INTERNAL_TIMESTAMP_HEADER, verifyInternal } from "../../../domain/internal-auth";
import { JobGoneError, createInternalApi } from "../../../encoder/internal-api";

/**
 * The encoder's client of the Worker's /internal API, against a server that checks the HMAC
 * signature as the Worker does and answers per path.
 */
const SECRET = "internal-secret-for-tests";
const jobId = "5b0f3c1e-8d2a-4c1b-9e7f-0a1b2c3d4e5f";
let server: Server;
let base: string;
const seen: { path: string; body: unknown }[] = [];

beforeAll(async () => {
  server = createServer(async (req, res) => {
    let raw = "";
    for await (const chunk of req) raw += chunk;
    const ok = await verifyInternal(
      SECRET,
      raw,
      req.headers[INTERNAL_TIMESTAMP_HEADER] as string | undefined,
      req.headers[INTERNAL_SIGNATURE_HEADER] as string | undefined,
    );
    if (!ok) return res.writeHead(401).end(JSON.stringify({ error: "Unauthorized" }));
    const path = req.url!.replace(`/internal/jobs/${jobId}`, "");
    seen.push({ path, body: JSON.parse(raw) });
    const answer = (status: number, body: string) => res.writeHead(status, { "content-type": "application/json" }).end(body);
    if (path === "/claim") return answer(200, JSON.stringify({ job: { id: jobId, attempt: 1, preset: "mp4_264_720p" } }));
    if (path === "/heartbeat") return answer(409, JSON.stringify({ status: "cancelled" }));
    if (path === "/complete") return answer(404, "{}");
    return answer(502, "<html>bad gateway</html>");
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  base = `http://127.0.0.1:${(server.address() as { port: number }).port}/`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
});

describe("internal API client", () => {
  const api = () => createInternalApi(base, SECRET);

  it("sends signed JSON and returns the claimed job", async () => {
    const job = await api().claim(jobId, 1);
    expect(job).toMatchObject({ id: jobId, attempt: 1, preset: "mp4_264_720p" });
    expect(seen.at(-1)).toEqual({ path: "/claim", body: { attempt: 1 } });
  });

  it("409 means the job left the state the encoder works in: JobGoneError with the status", async () => {
    const err = await api().heartbeat(jobId, 0.5).catch((e) => e);
    expect(err).toBeInstanceOf(JobGoneError);
    expect(err.status).toBe("cancelled");
  });

  it("404 means the job is gone for good", async () => {
    const err = await api().complete(jobId, "k/out.mp4", 2).catch((e) => e);
    expect(err).toBeInstanceOf(JobGoneError);
    expect(err.status).toBe("missing");
  });

  it("any other failure, with a body that is not JSON, is an error naming the path and status", async () => {
    await expect(api().fail(jobId, { errorMessage: "x", attempt: 0, final: false })).rejects.toThrow("internal API /jobs/" + jobId + "/fail answered 502: {}");
  });

  it("a wrong secret is refused by the Worker", async () => {
    await expect(createInternalApi(base, "another-secret-entirely").claim(jobId, 0)).rejects.toThrow(/answered 401/);
  });
});
