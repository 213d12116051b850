import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EXIT } from "../../../cli/exit-codes";
import { vep } from "../../support/cli";

/**
 * The CLI against a service that creates the job and then fails every read of it (a 500): what
 * a script gets once the job exists.
 */
const JOB_ID = "0f4e8c2a-5b1d-4c3e-9a7f-1e2d3c4b5a69";
const REQUEST_ID = "3d5c1b7e-8a2f-4c6d-9e0b-1f2a3b4c5d6e";
let server: Server;
let api: string;
beforeAll(async () => {
  server = createServer((req, res) => {
    const json = (status: number, body: unknown) =>
      res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body));
    if (req.method === "POST" && req.url === "/api/v1/jobs") {
      return json(201, {
        message: "Job created successfully",
        id: JOB_ID,
        status: "queued",
        preset: "mp4_264_720p",
        inputUrl: "https://media.example.com/a.mp4",
        webhookUrl: null,
        estimatedProcessingTime: "1-2 minutes",
        createdAt: new Date().toISOString(),
        user: { plan: "Starter", remainingJobs: 9 },
        links: { self: `/api/v1/jobs/${JOB_ID}`, cancel: `/api/v1/jobs/${JOB_ID}` },
      });
    }
    json(500, {
      error: "Internal server error",
      message: "An unexpected error occurred. Retry with backoff.",
      requestId: REQUEST_ID,
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  api = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise((r) => server.close(r));
});

describe("vep once the job exists", () => {
  it("a wait that fails says which job was created, on stderr and in the --json error, so a retry does not make another", async () => {
    const res = await vep(
      [
        "--json",
        "encode",
        "https://media.example.com/a.mp4",
        "--preset",
        "mp4_264_720p",
        "--wait",
        "--interval",
        "0.05",
      ],
      { api, key: "spk_test" },
    );
    expect(res.code).toBe(EXIT.unavailable);
    expect(res.json).toMatchObject({ jobId: JOB_ID, error: { kind: "server", retryable: true, status: 500 } });
    expect(res.stderr.trim().split("\n").at(-1)).toBe(
      `vep: service error (retry with backoff): An unexpected error occurred. Retry with backoff. (HTTP 500) (request id ${REQUEST_ID}); job ${JOB_ID} was created (vep jobs get ${JOB_ID})`,
    );
  }, 60_000);

  it("a base URL or a key that cannot make a request is a usage error (2), under --json too, the key never echoed", async () => {
    const noScheme = await vep(["--json", "jobs", "list"], { api: "127.0.0.1:8787", key: "spk_test" });
    expect(noScheme.code).toBe(EXIT.usage);
    expect(noScheme.json).toMatchObject({
      error: { kind: "cli", exitCode: EXIT.usage, message: expect.stringMatching(/must be an http\(s\) URL/) },
    });
    const mangled = await vep(["--json", "jobs", "list"], { api, key: "spk_secretpart\r\nspk_other" });
    expect(mangled.code).toBe(EXIT.usage);
    expect(mangled.stdout + mangled.stderr).not.toContain("secretpart");
  });
});
