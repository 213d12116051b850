/**
 * The Worker served by workerd through Miniflare, from the very bundle `wrangler deploy` uploads
 * (`wrangler deploy --dry-run --outdir`), with wrangler.toml's compatibility date, flags and vars.
 *
 * Not `wrangler dev`: it puts a proxy Worker in a second workerd in front of this one, which
 * forwards each request over a pooled connection. That pool drops a connection idle for 5 s just
 * as workerd's server does, so a request written on it at that moment is lost, and wrangler
 * answers a lost POST with 503 "Your worker restarted mid-request" though nothing restarted
 * (workers-sdk#14641, open; wrangler releases that classify the loss correctly exit on it
 * instead, #15317). Clients here talk to workerd directly, and Node's fetch lets a connection go
 * after 4 s, before workerd's 5.
 *
 * What `wrangler dev` adds that is kept: the request body a Worker leaves unread is drained before
 * its answer goes out. workerd otherwise keeps such a connection open and resets the client's next
 * request on it (an early 413 followed by any request on the same connection).
 *
 *   node dev/worker-serve.mjs --port <port>      bindings as JSON in WORKER_DEV_VARS
 */
import { execFile } from "node:child_process";
import { mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { parseArgs, promisify } from "node:util";
import { Log, LogLevel, Miniflare } from "miniflare";
import { parse } from "smol-toml";

/**
 * The Worker's handlers, its fetch given the request's body through a stream of this module's, so
 * that whatever the app leaves unread is drained before the answer goes out, as wrangler dev's
 * "ensure-req-body-drained" middleware does; also a body the app began to read and gave up on (a
 * chunked one cut off at its limit), which stays locked to the app's reader and which that
 * middleware cannot reach. The stream pulls nothing ahead of the app (highWaterMark 0), so the
 * app's limits see the body as sent.
 */
const LOCAL_ENTRY = `
import worker from "./index.js";
export default {
  ...worker,
  async fetch(request, env, ctx) {
    if (request.body === null) return worker.fetch(request, env, ctx);
    const source = request.body.getReader();
    let ended = false;
    let reading = null;
    const read = async () => {
      reading = source.read();
      const chunk = await reading;
      reading = null;
      if (chunk.done) ended = true;
      return chunk;
    };
    const body = new ReadableStream(
      {
        async pull(controller) {
          const chunk = await read();
          if (chunk.done) controller.close();
          else controller.enqueue(chunk.value);
        },
      },
      { highWaterMark: 0 },
    );
    const inner = new Request(request.url, { method: request.method, headers: request.headers, body, cf: request.cf });
    try {
      return await worker.fetch(inner, env, ctx);
    } finally {
      try {
        if (reading) await reading.then((chunk) => (ended ||= chunk.done));
        while (!ended) await read();
      } catch {
        // the client went away meanwhile; there is no connection left to keep
      }
    }
  },
};
`;

const { values } = parseArgs({ options: { port: { type: "string" } } });
const vars = JSON.parse(process.env.WORKER_DEV_VARS ?? "{}");
const wranglerBin = join(dirname(createRequire(import.meta.url).resolve("wrangler/package.json")), "bin", "wrangler.js");

const bundleDir = await mkdtemp(join(tmpdir(), `vep-worker-${values.port}-`));
let mf;
let stopping = false;
const stop = async (code) => {
  if (stopping) return;
  stopping = true;
  await mf?.dispose().catch(() => undefined);
  await rm(bundleDir, { recursive: true, force: true });
  process.exit(code);
};
for (const signal of ["SIGTERM", "SIGINT"]) process.on(signal, () => void stop(0));

try {
  await promisify(execFile)(process.execPath, [wranglerBin, "deploy", "--dry-run", "--outdir", bundleDir], { maxBuffer: 16 * 1024 * 1024 });
  // Read here rather than through wrangler's API, which would load all of wrangler a second time.
  const config = parse(await readFile("wrangler.toml", "utf8"));
  mf = new Miniflare({
    host: "127.0.0.1",
    port: Number(values.port),
    // /cdn-cgi/handler/scheduled runs the cron handler, as under `wrangler dev` (dev/run.ts fires the sweep through it).
    unsafeTriggerHandlers: true,
    log: new Log(LogLevel.WARN),
    // Request.cf as a fixed placeholder: Miniflare would otherwise fetch a real one from Cloudflare at every start.
    cf: false,
    compatibilityDate: config.compatibility_date,
    compatibilityFlags: config.compatibility_flags ?? [],
    bindings: { ...config.vars, ...vars },
    modulesRoot: bundleDir,
    modules: await bundleModules(bundleDir, config.rules ?? []),
  });
  await mf.ready;
  // workerd holds the modules now. Removed at once, as Miniflare's own exit hook ends this process
  // on SIGTERM before an asynchronous stop could get to it.
  await rm(bundleDir, { recursive: true, force: true });
  console.log(`Ready on http://127.0.0.1:${values.port}`);
} catch (err) {
  console.error(err);
  await stop(1);
}

/**
 * The local entry (the main module, first), the bundle's own, and beside it the modules
 * wrangler.toml's [[rules]] keep out of the bundle. wrangler names those by a content hash and
 * the file's base name, so which rule took one is not told by its name: every rule must be Text.
 */
async function bundleModules(dir, rules) {
  const other = rules.find((rule) => rule.type !== "Text");
  if (other) throw new Error(`wrangler.toml's ${other.type} rule: dev/worker-serve.mjs serves only Text modules beside the bundle`);
  const others = (await readdir(dir)).filter((name) => name !== "index.js" && !name.endsWith(".map") && name !== "README.md");
  return [
    { type: "ESModule", path: join(dir, "local-entry.mjs"), contents: LOCAL_ENTRY },
    { type: "ESModule", path: join(dir, "index.js") },
    ...others.map((name) => ({ type: "Text", path: join(dir, name) })),
  ];
}

