import { randomBytes } from "node:crypto";
import { createServer } from "node:http";
import type { PoolMachine } from "../../domain/pool";
import { close, guarded, listen } from "./listen";

export interface FlyMachinesApi {
  url: string;
  token: string;
  app: string;
  /** The app's Machines from now on, as `fly scale count` or `fly machine stop` would leave them. */
  setMachines(machines: readonly PoolMachine[]): void;
  /** How many requests it has answered, for tests. */
  requests(): number;
  stop(): Promise<void>;
}

/**
 * The part of Fly.io's Machines API the Worker reads (docs/deploying.md#the-encoder-pool):
 * `GET /v1/apps/{app}/machines`, the app's Machines as JSON, for a bearer token of its own.
 * Another app is a 404 and a wrong token a 401, with Fly's `{"error": …}` body.
 */
export async function startFlyMachinesApi(opts: {
  host: string;
  app: string;
  machines: readonly PoolMachine[];
}): Promise<FlyMachinesApi> {
  const token = `fm2_${randomBytes(16).toString("hex")}`;
  let machines = [...opts.machines];
  let requests = 0;
  const server = createServer(
    guarded("Fly Machines API", (req, res) => {
      requests += 1;
      const send = (status: number, body: unknown) =>
        res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body));
      if (req.headers.authorization !== `Bearer ${token}`) return send(401, { error: "unauthorized" });
      const match = /^\/v1\/apps\/([^/?]+)\/machines(?:\?.*)?$/.exec(req.url ?? "");
      if (req.method !== "GET" || !match) return send(404, { error: "not found" });
      if (decodeURIComponent(match[1]) !== opts.app) return send(404, { error: "app not found" });
      send(200, machines);
    }),
  );
  const port = await listen(server, opts.host);
  return {
    url: `http://${opts.host}:${port}`,
    token,
    app: opts.app,
    setMachines: (next) => {
      machines = [...next];
    },
    requests: () => requests,
    stop: () => close(server),
  };
}
