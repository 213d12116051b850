import { createServer } from "node:http";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { close, listen } from "../../../dev/cloud/listen";
import type { Env } from "../../../worker/env";
import { markKeysChanged } from "../../../worker/lib/key-cache";
import { createCache } from "../../../worker/services/cache";

/** What the Worker's Redis client sent: each request's path and body, answered as Upstash answers (null for each command). */
const sent: { path: string; body: string }[] = [];
const server = createServer((req, res) => {
  let body = "";
  req.on("data", (chunk) => (body += chunk));
  req.on("end", () => {
    sent.push({ path: req.url ?? "", body });
    res.setHeader("content-type", "application/json");
    res.end(
      JSON.stringify(req.url === "/pipeline" ? JSON.parse(body).map(() => ({ result: null })) : { result: null }),
    );
  });
});
let url: string;
beforeAll(async () => {
  url = `http://127.0.0.1:${await listen(server, "127.0.0.1", 0)}`;
});
afterAll(() => close(server));

const cacheClient = () => createCache({ UPSTASH_REDIS_REST_URL: url, UPSTASH_REDIS_REST_TOKEN: "token" } as Env);
beforeEach(() => {
  sent.length = 0;
});

describe("the Worker's Redis client (worker/services/cache.ts)", () => {
  it("sends each command on its own, not through an automatic pipeline (whose per-command pipeline objects cost the Worker's CPU)", async () => {
    const cache = cacheClient();
    await Promise.all([cache.get("a"), cache.get("b")]);
    expect(sent.map((r) => r.path).sort()).toEqual(["/", "/"]);
    expect(sent.map((r) => JSON.parse(r.body)).sort()).toEqual([
      ["get", "a"],
      ["get", "b"],
    ]);
  });

  it("marks all of an account's keys changed in one request (a plan or webhook change), not one a key", async () => {
    await markKeysChanged(cacheClient(), ["h1", "h2", "h3"]);
    expect(sent).toHaveLength(1);
    expect(sent[0].path).toBe("/pipeline");
    expect(JSON.parse(sent[0].body).map((command: string[]) => command[1])).toEqual([
      "apikey:h1",
      "apikey:h2",
      "apikey:h3",
    ]);
  });
});
