import { mkdtemp, readFile, readdir, rm, writeFile } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createVepClient, DownloadError, NetworkError } from "../../../client";
import { EXIT } from "../../../cli/exit-codes";
import { vep } from "../../support/cli";

/**
 * A service whose download-url answers 200 with a link that the storage then refuses, with the
 * status in the job's id: what the client and the CLI make of the storage's 403, 404 and 503,
 * which are not the API's own (not in your plan, no such job, retry).
 */
const JOB = (status: number) => `0f4e8c2a-5b1d-4c3e-9a7f-1e2d3c4b${String(status).padStart(4, "0")}`;
let server: Server;
let api: string;
let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "vep-storage-refusal-"));
  server = createServer((req, res) => {
    const signed = /^\/api\/v1\/jobs\/[\w-]+?(\d{4})\/download-url$/.exec(req.url ?? "");
    if (signed) {
      return res.writeHead(200, { "content-type": "application/json" }).end(
        JSON.stringify({
          downloadUrl: `${api}/storage/${Number(signed[1])}?X-Amz-Signature=abc`,
          expiresAt: new Date(Date.now() + 3_600_000).toISOString(),
        }),
      );
    }
    const storage = /^\/storage\/(\d+)/.exec(req.url ?? "");
    // Status 0: a storage that takes the request and never answers.
    if (storage?.[1] === "0") return;
    // Status 1: one that answers at once and then sends the file slowly, in 4 parts 500 ms apart:
    // 1.5 s in all, past the client's timeout below.
    if (storage?.[1] === "1") {
      res.writeHead(200, { "content-type": "video/mp4" });
      let part = 0;
      const next = () => {
        if (++part >= 4) return res.end("end");
        res.write(`part${part}`);
        setTimeout(next, 500);
      };
      return next();
    }
    res
      .writeHead(storage ? Number(storage[1]) : 500, { "content-type": "application/xml" })
      .end("<Error><Code>NoSuchKey</Code></Error>");
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  api = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise((r) => server.close(r));
  await rm(dir, { recursive: true, force: true });
});

describe("a signed download link the storage refuses", () => {
  it("the client throws a DownloadError with the storage's status, retryable only for the storage's own 5xx", async () => {
    const client = createVepClient({ baseUrl: api, apiKey: "spk_test" });
    const failures = await Promise.all(
      [404, 403, 503].map((status) => client.fetchOutput(JOB(status)).catch((e: unknown) => e)),
    );
    for (const err of failures) expect(err).toBeInstanceOf(DownloadError);
    expect(failures).toMatchObject([
      {
        kind: "download",
        status: 404,
        retryable: false,
        message: expect.stringMatching(/HTTP 404: the output was removed after the link was signed/),
      },
      {
        kind: "download",
        status: 403,
        retryable: false,
        message: expect.stringMatching(/HTTP 403: the link was refused/),
      },
      { kind: "download", status: 503, retryable: true },
    ]);
  });

  it("a storage that does not answer within timeoutMs is a retryable NetworkError; one that answers in time may take longer to send the file", async () => {
    // A second: time enough for this machine's answers under a full suite's load (300 ms was not).
    const client = createVepClient({ baseUrl: api, apiKey: "spk_test", timeoutMs: 1000 });
    const err = await client.fetchOutput(JOB(0)).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(NetworkError);
    expect(err).toMatchObject({ kind: "network", retryable: true });
    const slow = await client.fetchOutput(JOB(1));
    expect(await slow.text()).toBe("part1part2part3end");
  });

  it("the CLI says the storage refused it (exit 13), not that the job is missing, and leaves the file as it was", async () => {
    const out = join(dir, "out.mp4");
    await writeFile(out, "what was there");
    const run = await vep(["--json", "jobs", "download", JOB(404), "--out", out], { api, key: "spk_test" });
    expect(run.code).toBe(EXIT.downloadFailed);
    expect(run.stderr.trim()).toBe(
      "vep: download refused by the storage: The storage answered the signed download link with HTTP 404: the output was removed after the link was signed",
    );
    expect(run.json).toMatchObject({ error: { kind: "download", status: 404, retryable: false } });
    expect(await readFile(out, "utf8")).toBe("what was there");
    expect(await readdir(dir)).toEqual(["out.mp4"]);
  });
});
