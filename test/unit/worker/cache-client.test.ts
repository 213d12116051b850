import { createServer } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { close, listen } from "../../../dev/cloud/listen";
import type { Env } from "../../../worker/env";
import { createCache } from "../../../worker/services/cache";

/** What the Worker's Redis client sent: each request's path and body, answered as Upstash answers a lone GET. */
const sent: { path: string; body: string }[] = [];
const server = createServer((req, res) => {
  let body = "";
  req.on("data", (chunk) => (body += chunk));
  req.on("end", () => {
    sent.push({ path: req.url ?? "", body });
    res.setHeader("content-type", "application/json");
    res.end(req.url === "/pipeline" ? JSON.stringify([{ result: null }, { result: null }]) : JSON.stringify({ result: null }));
  });
});
let url: string;
beforeAll(async () => {
  url = `http://127.0.0.1:${await listen(server, "127.0.0.1", 0)}`;
});
afterAll(() => close(server));

describe("the Worker's Redis client (worker/services/cache.ts)", () => {
  it("sends each command on its own, not through an automatic pipeline (whose per-command pipeline objects cost the Worker's CPU)", async () => {
    const cache = createCache({ UPSTASH_REDIS_REST_URL: url, UPSTASH_REDIS_REST_TOKEN: "token" } as Env);
    await Promise.all([cache.get("a"), cache.get("b")]);
    expect(sent.map((r) => r.path).sort()).toEqual(["/", "/"]);
    expect(sent.map((r) => JSON.parse(r.body)).sort()).toEqual([["get", "a"], ["get", "b"]]);
  });
});
