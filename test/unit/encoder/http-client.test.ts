import { createServer, type Server, type Socket } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { HttpTimeoutError, httpRequest, readBody } from "../../../encoder/http/client";

/**
 * The encoder's one HTTP client (Node's http), against raw TCP servers that misbehave on cue:
 * every failure must come back as a rejection, never as something thrown from an event handler.
 */
let server: Server | undefined;
const sockets = new Set<Socket>();
afterEach(async () => {
  // The client pools keep-alive connections: close them from this side so the server can stop.
  for (const socket of sockets) socket.destroy();
  sockets.clear();
  if (server) await new Promise((r) => server!.close(r));
  server = undefined;
});

/** A raw HTTP/1.1 server: `onRequest` gets the socket and the request's number on that connection. */
async function rawServer(onRequest: (socket: Socket, n: number, connection: number) => void): Promise<string> {
  let connections = 0;
  server = createServer((socket) => {
    const connection = ++connections;
    sockets.add(socket);
    let n = 0;
    let buffered = "";
    socket.on("error", () => undefined);
    socket.on("data", (chunk) => {
      buffered += chunk.toString("latin1");
      // Requests here have no body: each blank line ends one.
      while (buffered.includes("\r\n\r\n")) {
        buffered = buffered.slice(buffered.indexOf("\r\n\r\n") + 4);
        onRequest(socket, ++n, connection);
      }
    });
  });
  await new Promise<void>((r) => server!.listen(0, "127.0.0.1", r));
  return `http://127.0.0.1:${(server!.address() as { port: number }).port}`;
}

const ok = (body: string) => `HTTP/1.1 200 OK\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;

describe("encoder HTTP client", () => {
  it("reads a whole answer", async () => {
    const base = await rawServer((socket) => socket.write(ok("hello")));
    const res = await httpRequest(`${base}/x`, { method: "POST", body: "{}" });
    expect(res.status).toBe(200);
    expect((await readBody(res)).toString()).toBe("hello");
  });

  it("a pooled connection the server dropped as the next request arrived: sent again on a new one", async () => {
    const served: number[] = [];
    const base = await rawServer((socket, n, connection) => {
      if (n === 2) return socket.destroy(); // a keep-alive connection closed under the request
      served.push(connection);
      socket.write(ok(`answer ${served.length}`));
    });
    expect((await readBody(await httpRequest(`${base}/a`, { method: "POST", body: "1" }))).toString()).toBe("answer 1");
    expect((await readBody(await httpRequest(`${base}/b`, { method: "POST", body: "2" }))).toString()).toBe("answer 2");
    expect(served).toEqual([1, 2]);
  });

  it("a caller that counts its requests (resendOnStaleConnection: false): the dropped request fails, nothing is resent", async () => {
    let requests = 0;
    const base = await rawServer((socket, n) => {
      requests += 1;
      if (n === 2) return socket.destroy();
      socket.write(ok("answer"));
    });
    await readBody(await httpRequest(`${base}/a`, { method: "POST", body: "1", resendOnStaleConnection: false }));
    await expect(
      httpRequest(`${base}/b`, { method: "POST", body: "2", resendOnStaleConnection: false }),
    ).rejects.toMatchObject({ code: "ECONNRESET" });
    expect(requests).toBe(2);
  });

  it("a server that closes mid-body: the body's reader gets the error", async () => {
    const base = await rawServer((socket) =>
      socket.end("HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\nonly part of it"),
    );
    const res = await httpRequest(`${base}/x`);
    await expect(readBody(res)).rejects.toMatchObject({ code: "ECONNRESET" });
  });

  it("a connection that cannot be opened in time: ECONNECTTIMEOUT", async () => {
    // A resolver that never answers stands for a host that never completes the handshake.
    const err = await httpRequest("http://never.test/x", { lookup: () => undefined, connectTimeoutMs: 200 }).catch(
      (e) => e,
    );
    expect(err).toBeInstanceOf(HttpTimeoutError);
    expect(err.code).toBe("ECONNECTTIMEOUT");
  });

  it("a server that goes quiet after the headers: EIDLETIMEOUT", async () => {
    const base = await rawServer((socket) => socket.write("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc"));
    const res = await httpRequest(`${base}/x`, { idleTimeoutMs: 200 });
    const err = await readBody(res).catch((e) => e);
    expect(err).toBeInstanceOf(HttpTimeoutError);
    expect(err.code).toBe("EIDLETIMEOUT");
  });

  it("an aborted request rejects with the abort", async () => {
    let requested!: () => void;
    const arrived = new Promise<void>((resolve) => (requested = resolve));
    const base = await rawServer(() => requested());
    const controller = new AbortController();
    const pending = httpRequest(`${base}/x`, { signal: controller.signal });
    // Aborted while it waits for an answer that never comes.
    await arrived;
    controller.abort();
    await expect(pending).rejects.toMatchObject({ name: "AbortError" });
  });

  it("refuses an answer larger than the reader's limit", async () => {
    const base = await rawServer((socket) => socket.write(ok("x".repeat(5000))));
    await expect(readBody(await httpRequest(`${base}/x`), 1000)).rejects.toThrow(/larger than 1000 bytes/);
  });
});
