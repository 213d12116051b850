/**
 * wrangler's dev server (the same bundling, workerd and bindings as `wrangler dev`) started
 * through wrangler's own API, which alone can leave out the DevTools inspector. `wrangler dev`
 * always attaches one and has it report every request and sub-request of the Worker to the
 * wrangler process (network events, each relayed and written to wrangler's debug log): on two
 * cores that cost more CPU than the Worker itself. Deployed Workers have no such thing, and
 * nothing here ever attached DevTools (the CLI's inspector port was random).
 *
 *   node dev/wrangler-dev.mjs --port <port>      bindings as JSON in WORKER_DEV_VARS
 */
import { parseArgs } from "node:util";
import { unstable_startWorker } from "wrangler";

const { values } = parseArgs({ options: { port: { type: "string" } } });
const vars = JSON.parse(process.env.WORKER_DEV_VARS ?? "{}");

const worker = await unstable_startWorker({
  config: "wrangler.toml",
  // What `wrangler deploy` derives from wrangler.toml's nodejs_compat flag and date. This API left
  // it unset until workers-sdk#14617, bundling without the flag (and warning about node:async_hooks).
  build: { nodejsCompatMode: "v2" },
  bindings: Object.fromEntries(Object.entries(vars).map(([name, value]) => [name, { type: "plain_text", value }])),
  dev: {
    inspector: false,
    remote: false,
    // As `wrangler dev`: /cdn-cgi/handler/scheduled runs the cron handler (dev/run.ts fires the sweep through it).
    testScheduled: true,
    server: { hostname: "127.0.0.1", port: Number(values.port) },
  },
});
await worker.ready;

let stopping = false;
for (const signal of ["SIGTERM", "SIGINT"]) {
  process.on(signal, () => {
    if (stopping) return;
    stopping = true;
    worker.dispose().finally(() => process.exit(0));
  });
}
