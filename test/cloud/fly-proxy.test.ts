import { createServer, request, type Server } from "node:http";
import { afterEach, describe, expect, it, vi } from "vitest";
import { freePort } from "../../dev/cloud/free-port";
import { startFlyProxy, type FlyProxy } from "../../dev/cloud/fly-proxy";
import { close, listen } from "../../dev/cloud/listen";

/**
 * The stand-in for Fly.io's proxy that `npm run dev` puts in front of its encoders
 * (dev/cloud/fly-proxy.ts), between real HTTP servers standing for the encoders.
 */
const running: { stop(): Promise<void> }[] = [];
afterEach(async () => {
  for (const r of running.splice(0).reverse()) await r.stop();
});

/** A server that answers with its name and what it was sent. */
async function namedServer(name: string, handler?: Parameters<typeof createServer>[1]) {
  const server: Server = createServer(
    handler ??
      (async (req, res) => {
        const chunks: Buffer[] = [];
        for await (const chunk of req) chunks.push(chunk);
        res.writeHead(200, { "content-type": "application/json", "x-encoder": name });
        res.end(JSON.stringify({ name, method: req.method, url: req.url, body: Buffer.concat(chunks).toString() }));
      }),
  );
  const port = await listen(server, "127.0.0.1");
  running.push({ stop: () => close(server) });
  return port;
}

async function proxyOver(ports: number[]): Promise<FlyProxy> {
  const proxy = await startFlyProxy({ ports });
  running.push(proxy);
  return proxy;
}

const post = (url: string, body: string) => fetch(url, { method: "POST", body }).then((res) => res.json());

describe("the local Fly.io proxy", () => {
  it("sends each request to the next encoder in turn, method, path and body unchanged", async () => {
    const proxy = await proxyOver([await namedServer("encoder-1"), await namedServer("encoder-2")]);
    const answers = [];
    for (let i = 0; i < 4; i++) answers.push(await post(`${proxy.url}/deliveries/jobs?n=${i}`, `{"i":${i}}`));
    expect(answers).toEqual(
      [0, 1, 2, 3].map((i) => ({
        name: `encoder-${(i % 2) + 1}`,
        method: "POST",
        url: `/deliveries/jobs?n=${i}`,
        body: `{"i":${i}}`,
      })),
    );
  });

  it("passes over an encoder that refuses the connection, and answers 502 when none takes it", async () => {
    const down = await freePort();
    const proxy = await proxyOver([await namedServer("encoder-1"), down]);
    const names = [];
    for (let i = 0; i < 3; i++) names.push((await post(`${proxy.url}/x`, "")).name);
    expect(names).toEqual(["encoder-1", "encoder-1", "encoder-1"]);

    const none = await proxyOver([down, await freePort()]);
    const res = await fetch(`${none.url}/x`, { method: "POST", body: "{}" });
    expect(res.status).toBe(502);
  });

  it("streams: the encoder has the first chunk of a body not yet ended, and the client the first chunk of an answer not yet ended", async () => {
    let firstChunkArrived: () => void = () => undefined;
    const arrived = new Promise<void>((resolve) => (firstChunkArrived = resolve));
    let finishAnswer: () => void = () => undefined;
    const port = await namedServer("encoder-1", (req, res) => {
      req.once("data", (chunk: Buffer) => {
        expect(chunk.toString()).toBe("first;");
        firstChunkArrived();
      });
      res.writeHead(200, { "content-type": "text/plain" });
      res.write("progress;");
      finishAnswer = () => res.end("done");
    });
    const proxy = await proxyOver([port]);

    const { port: proxyPort } = new URL(proxy.url);
    const answer = await new Promise<import("node:http").IncomingMessage>((resolve, reject) => {
      const req = request({ host: "127.0.0.1", port: proxyPort, method: "POST", path: "/stream" }, resolve);
      req.on("error", reject);
      req.write("first;");
      // The rest of the body only once the encoder has seen its beginning: nothing waits for the whole.
      void arrived.then(() => req.end("rest"));
    });
    const chunks: string[] = [];
    const ended = new Promise<void>((resolve) => answer.on("end", resolve));
    answer.setEncoding("utf8");
    await new Promise<void>((resolve) =>
      answer.on("data", (chunk: string) => {
        chunks.push(chunk);
        resolve();
      }),
    );
    expect(chunks).toEqual(["progress;"]);
    finishAnswer();
    await ended;
    expect(chunks.join("")).toBe("progress;done");
  });

  it("an encoder that dies mid-answer cuts the client's connection; one that dies before answering is a 502", async () => {
    const diesEarly = await namedServer("encoder-1", (req) => req.socket.destroy());
    const early = await proxyOver([diesEarly]);
    expect((await fetch(`${early.url}/x`, { method: "POST", body: "{}" })).status).toBe(502);

    const diesLate = await namedServer("encoder-2", (req, res) => {
      res.writeHead(200, { "content-type": "text/plain" });
      res.write("partial");
      setImmediate(() => req.socket.destroy());
    });
    const late = await proxyOver([diesLate]);
    const res = await fetch(`${late.url}/x`, { method: "POST", body: "{}" });
    expect(res.status).toBe(200);
    await expect(res.text()).rejects.toThrow();
  });

  it("sends a request to the least loaded encoder, never past its hard limit: at the limit everywhere, it waits for the first to free", async () => {
    // Each encoder holds a request until the test answers it, by its body.
    const held = new Map<string, (name: string) => void>();
    const holding = (name: string) =>
      namedServer(name, async (req, res) => {
        const chunks: Buffer[] = [];
        for await (const chunk of req) chunks.push(chunk);
        held.set(Buffer.concat(chunks).toString(), () => res.end(name));
      });
    const proxy = await startFlyProxy({
      ports: [await holding("encoder-1"), await holding("encoder-2")],
      hardLimit: 1,
    });
    running.push(proxy);
    const send = (body: string) => fetch(`${proxy.url}/x`, { method: "POST", body }).then((res) => res.text());
    const heldFor = (body: string) => vi.waitFor(() => expect(held.has(body)).toBe(true));

    const long = send("long");
    await heldFor("long");
    const short = send("short");
    await heldFor("short");
    // Both at their limit: the next waits, whoever's turn it is, and a client that leaves meanwhile is forgotten.
    const leaving = new AbortController();
    const left = fetch(`${proxy.url}/x`, { method: "POST", body: "left", signal: leaving.signal }).catch(() => "left");
    const waiting = send("waiting");
    await vi.waitFor(() => expect(proxy.waiting()).toBe(2));
    expect([...held.keys()]).toEqual(["long", "short"]);
    leaving.abort();
    expect(await left).toBe("left");
    held.get("short")?.("");
    expect(await short).toBe("encoder-2");
    await heldFor("waiting");
    held.get("waiting")?.("");
    expect(await waiting).toBe("encoder-2");
    expect(held.has("left")).toBe(false);
    held.get("long")?.("");
    expect(await long).toBe("encoder-1");
  });
});
