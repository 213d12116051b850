/**
 * The Worker served by workerd through Miniflare, from the very bundle `wrangler deploy` uploads
 * (`wrangler deploy --dry-run --outdir`), with wrangler.toml's compatibility date, flags and vars.
 *
 * Not `wrangler dev`: it puts a proxy Worker in a second workerd in front of this one, which
 * forwards each request over a pooled connection. That pool drops a connection idle for 5 s just
 * as workerd's server does, so a request written on it at that moment is lost, and wrangler
 * answers a lost POST with 503 "Your worker restarted mid-request" though nothing restarted (a
 * known wrangler issue, still open; releases that classify the loss correctly exit on it instead).
 * Clients here talk to workerd directly, and Node's fetch lets a connection go after 4 s, before
 * workerd's 5.
 *
 * What `wrangler dev` adds that is kept: the request body a Worker leaves unread is drained before
 * its answer goes out. workerd otherwise keeps such a connection open and resets the client's next
 * request on it (an early 413 followed by any request on the same connection).
 *
 *   node dev/worker-serve.mjs --port <port> [--watch] [--inspector-port <port>]
 *   (bindings as JSON in WORKER_DEV_VARS; --inspector-port opens workerd's DevTools inspector, for bench:profile)
 */
import { execFile } from "node:child_process";
import { mkdtemp, readdir, rm } from "node:fs/promises";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join, relative, sep } from "node:path";
import { parseArgs, promisify } from "node:util";
import { Log, LogLevel, Miniflare } from "miniflare";
import { bundleOf, bundleSources } from "./worker-bundle-cache.mjs";
import { readWranglerConfig, runtimeOptions } from "./wrangler-config.mjs";
import { oneAtATime, watchTrees } from "./watch-trees.mjs";

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

const { values } = parseArgs({
  options: {
    port: { type: "string" },
    watch: { type: "boolean", default: false },
    "inspector-port": { type: "string" },
  },
});
const vars = JSON.parse(process.env.WORKER_DEV_VARS ?? "{}");
const wranglerBin = join(
  dirname(createRequire(import.meta.url).resolve("wrangler/package.json")),
  "bin",
  "wrangler.js",
);

/** Bundle directories not yet removed: workerd reads them until it is ready on them. */
const bundleDirs = new Set();
let mf;
let stopping = false;
// --watch: the directories watched (joined), and what stops watching them.
let watchedTrees = "";
let unwatch = () => undefined;
const stop = async (code) => {
  if (stopping) return;
  stopping = true;
  await mf?.dispose().catch(() => undefined);
  await Promise.all([...bundleDirs].map((dir) => rm(dir, { recursive: true, force: true })));
  process.exit(code);
};
for (const signal of ["SIGTERM", "SIGINT"]) process.on(signal, () => void stop(0));

// --watch: a change builds the Worker again and hands it to workerd (watchSources).
const rebuild = oneAtATime(async () => {
  if (stopping) return;
  const started = Date.now();
  let next;
  try {
    next = await build();
  } catch (err) {
    report("The Worker did not build; the previous build still serves.", err);
    return;
  }
  try {
    await settle(next, mf.setOptions(next.options));
  } catch (err) {
    report("workerd did not load the new build (its error is above); nothing serves until a build loads.", err);
    return;
  }
  watchSources(next.sources);
  console.log(`Reloaded the Worker in ${Date.now() - started} ms`);
});

try {
  const first = await build();
  mf = new Miniflare(first.options);
  await settle(first, mf.ready);
  console.log(`Ready on http://127.0.0.1:${values.port}`);
  if (values.watch) watchSources(first.sources);
} catch (err) {
  console.error(err);
  await stop(1);
}

/**
 * The Worker as `wrangler deploy` would upload it (built in a new temporary directory, or kept
 * from a start that saw the same files), with the options that serve it and, under --watch, the
 * project files it was built from.
 */
async function build() {
  // The directory this build made, if it made one (none when a kept bundle serves).
  let made;
  const newTemporaryDir = async () => {
    made = await mkdtemp(join(tmpdir(), `vep-worker-${values.port}-`));
    bundleDirs.add(made);
    return made;
  };
  try {
    const { dir } = await bundleOf(process.cwd(), newTemporaryDir, (outdir) =>
      promisify(execFile)(process.execPath, [wranglerBin, "deploy", "--dry-run", "--outdir", outdir], {
        maxBuffer: 16 * 1024 * 1024,
      }),
    );
    const config = await readWranglerConfig(process.cwd());
    const options = {
      host: "127.0.0.1",
      port: Number(values.port),
      // /cdn-cgi/handler/scheduled runs the cron handler, as under `wrangler dev` (dev/run.ts fires the sweep through it).
      unsafeTriggerHandlers: true,
      log: new Log(LogLevel.WARN),
      // Request.cf as a fixed placeholder: Miniflare would otherwise fetch a real one from Cloudflare at every start.
      cf: false,
      ...(values["inspector-port"] ? { inspectorPort: Number(values["inspector-port"]) } : {}),
      ...runtimeOptions(config),
      bindings: { ...config.vars, ...vars },
      modulesRoot: dir,
      modules: await bundleModules(dir, config.rules ?? []),
    };
    return { dir, options, sources: values.watch ? await bundleSources(dir) : [] };
  } catch (err) {
    if (made) await removeIfTemporary(made);
    throw err;
  }
}

/** Removes a bundle directory this process made; one kept for later starts stays. */
async function removeIfTemporary(dir) {
  if (!bundleDirs.delete(dir)) return;
  await rm(dir, { recursive: true, force: true });
}

/**
 * Once workerd holds a build's modules, its directory is removed at once: Miniflare's own exit
 * hook ends this process on SIGTERM before an asynchronous stop could get to it.
 */
async function settle(built, ready) {
  try {
    await ready;
  } finally {
    await removeIfTemporary(built.dir);
  }
}

/**
 * --watch: a change under a top-level directory holding one of the bundle's sources (worker/,
 * domain/…: the text modules beside them included, which the source map does not name), or to
 * wrangler.toml, builds the Worker again and hands it to workerd. A build that fails leaves the
 * previous one serving; one that workerd cannot load (a module that throws as it loads) leaves
 * none, as workerd has restarted on it, until a build loads.
 */
function watchSources(sources) {
  const root = process.cwd();
  const trees = [
    ...new Set(
      sources.map((source) =>
        source.startsWith(root + sep) ? join(root, relative(root, source).split(sep)[0]) : dirname(source),
      ),
    ),
  ].sort();
  // A build from the same directories keeps the watchers it has (a recursive walk to set up again).
  if (trees.join("\0") === watchedTrees) return;
  unwatch();
  watchedTrees = trees.join("\0");
  unwatch = watchTrees({ trees, root, rootFiles: ["wrangler.toml"], onChange: () => void rebuild() });
}

/** Every line prefixed, so that `npm run dev`, which shows a Worker line only when it names an error, shows them all. */
function report(what, err) {
  const said = String(err.stderr || err.message || err)
    .split("\n")
    .filter((line) => line.trim());
  console.error([what, ...said].map((line) => `build error: ${line}`).join("\n"));
}

/**
 * The local entry (the main module, first), the bundle's own, and beside it the modules
 * wrangler.toml's [[rules]] keep out of the bundle. wrangler names those by a content hash and
 * the file's base name, so which rule took one is not told by its name: every rule must be Text.
 */
async function bundleModules(dir, rules) {
  const other = rules.find((rule) => rule.type !== "Text");
  if (other)
    throw new Error(
      `wrangler.toml's ${other.type} rule: dev/worker-serve.mjs serves only Text modules beside the bundle`,
    );
  const others = (await readdir(dir)).filter(
    (name) => name !== "index.js" && !name.endsWith(".map") && name !== "README.md",
  );
  return [
    { type: "ESModule", path: join(dir, "local-entry.mjs"), contents: LOCAL_ENTRY },
    { type: "ESModule", path: join(dir, "index.js") },
    ...others.map((name) => ({ type: "Text", path: join(dir, name) })),
  ];
}
