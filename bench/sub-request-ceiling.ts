/**
 * The most a route can reach against the bare route when it makes N sub-requests, whatever its
 * own code: a Worker on the same workerd and compatibility settings as ours whose route /N does
 * nothing but N sub-requests, one after another, to a server that answers at once with a fixed
 * reply shaped like the Neon endpoint's for one row, and gives back the last reply's row; /0 is
 * its bare route. bench:api measures these beside our routes, round by round, so each route's
 * ratio can be read against the ratio no Worker with its sub-requests could pass on this machine.
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { Log, LogLevel, Miniflare } from "miniflare";
import { PROJECT_ROOT } from "../dev/state";
import { readWranglerConfig, runtimeOptions } from "../dev/wrangler-config.mjs";

export const MAX_SUBREQUESTS = 3;

/** A reply the size of the Neon endpoint's for a job's row: every column described, one row of values. */
function neonShapedReply(): string {
  const columns = Array.from({ length: 16 }, (_, i) => `column_${i}`);
  return JSON.stringify({
    command: "SELECT",
    rowCount: 1,
    rowAsArray: true,
    fields: columns.map((name, i) => ({
      name,
      dataTypeID: 25,
      tableID: 16400,
      columnID: i + 1,
      dataTypeSize: -1,
      dataTypeModifier: -1,
      format: "text",
    })),
    rows: [columns.map((name) => `${name} value 5f0c7a1e-2b1e-4d7e-9a2c-1d3b6b1f0a11`)],
  });
}

function script(target: string) {
  return `
export default {
  async fetch(request) {
    const n = Number(new URL(request.url).pathname.slice(1));
    if (n === 0) return Response.json({ ok: true });
    let reply;
    for (let i = 0; i < n; i++) {
      const res = await fetch(${JSON.stringify(target)}, {
        method: "POST",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify({ query: "select $1", params: [i] }),
      });
      reply = await res.json();
    }
    return Response.json(reply.rows[0]);
  },
};`;
}

export async function startCeilingWorker(port: number) {
  const reply = neonShapedReply();
  const server = createServer((req, res) => {
    req.resume();
    req.on("end", () => res.writeHead(200, { "Content-Type": "application/json" }).end(reply));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const target = `http://127.0.0.1:${(server.address() as AddressInfo).port}/sql`;

  const closeServer = () => new Promise((resolve) => server.close(resolve));

  let mf: Miniflare | undefined;
  try {
    mf = new Miniflare({
      host: "127.0.0.1",
      port,
      cf: false,
      log: new Log(LogLevel.WARN),
      ...runtimeOptions(await readWranglerConfig(PROJECT_ROOT)),
      modules: true,
      script: script(target),
    });
    const url = await mf.ready;
    const running = mf;
    return {
      /** The route making `n` sub-requests (0: the bare route). */
      url: (n: number) => new URL(`/${n}`, url).href,
      async stop() {
        await running.dispose();
        await closeServer();
      },
    };
  } catch (err) {
    await mf?.dispose().catch(() => undefined);
    await closeServer();
    throw err;
  }
}
