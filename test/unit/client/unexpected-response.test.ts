import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createVepClient, NetworkError, UnexpectedResponseError } from "../../../client";
import { EXIT } from "../../../cli/exit-codes";
import { vep } from "../../support/cli";

const JOB_ID = "0f4e8c2a-5b1d-4c3e-9a7f-1e2d3c4b5a69";

/**
 * Where the API should be, a web server answering 200 with an HTML page (a wrong base URL, a
 * proxy's sign-in page); under /cut/, an answer whose JSON body breaks off mid-way.
 */
let server: Server;
let url: string;
let requests = 0;
beforeAll(async () => {
  server = createServer((req, res) => {
    requests++;
    if (req.url?.startsWith("/cut/")) {
      res.writeHead(200, { "content-type": "application/json", "content-length": "100" }).write('{"id":');
      return res.destroy();
    }
    res.writeHead(200, { "content-type": "text/html" }).end("<!doctype html><title>Welcome</title>");
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise((r) => server.close(r));
});

describe("a success whose body is not JSON", () => {
  it("is an UnexpectedResponseError with the status, not retryable: waitForJob gives up at the first read", async () => {
    const client = createVepClient({ baseUrl: url, apiKey: "spk_test" });
    const err = await client.listJobs().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UnexpectedResponseError);
    expect(err).toMatchObject({
      kind: "unexpected-response",
      status: 200,
      retryable: false,
      message: expect.stringContaining("text/html"),
    });
    const before = requests;
    await expect(client.waitForJob(JOB_ID, { intervalMs: 10 })).rejects.toBeInstanceOf(UnexpectedResponseError);
    expect(requests - before).toBe(1);
  });

  it("a JSON body cut off by the connection is still a NetworkError, retryable", async () => {
    const err = await createVepClient({ baseUrl: `${url}/cut`, apiKey: "spk_test" })
      .listJobs()
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(NetworkError);
    expect(err).toMatchObject({ kind: "network", retryable: true });
  });

  it("the CLI says it is not the API's answer: exit 14, under --json with the status", async () => {
    const res = await vep(["--json", "jobs", "get", JOB_ID], { api: url, key: "spk_test" });
    expect(res.code).toBe(EXIT.unexpectedResponse);
    expect(res.stderr.trim()).toMatch(
      /^vep: not the API's answer: The service answered HTTP 200 with a body that is not JSON \(text\/html\): is the base URL the API's\?$/,
    );
    expect(res.json).toMatchObject({ error: { kind: "unexpected-response", status: 200, retryable: false } });
  });
});
