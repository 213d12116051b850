import { watch } from "node:fs";
import { basename } from "node:path";

/**
 * `npm run dev`'s file watching, for the Worker's server (plain Node, hence .mjs) and the
 * encoder's supervisor: `onChange` is called once a burst of changes under one of `trees`
 * (recursively) or to one of `rootFiles` (names in `root`) has settled for `settleMs`. Whole
 * directories, as editors save by replacing a file, which ends a watch on the file itself; their
 * swap and backup files (`.x.swp`, `x~`) are not changes. A tree that does not exist is skipped.
 *
 * Closing stops the watching, but a change already seen still calls `onChange` once it has
 * settled: a rebuild that replaces its watchers must not lose an edit made just before, so
 * `onChange` itself checks whether it is still wanted.
 */
export function watchTrees({ trees, root, rootFiles = [], onChange, settleMs = 200 }) {
  let settling;
  const watchers = [];
  const changed = (name) => {
    if (!name || basename(name).startsWith(".") || name.endsWith("~")) return;
    clearTimeout(settling);
    settling = setTimeout(onChange, settleMs);
  };
  const add = (dir, options, listener) => {
    try {
      watchers.push(watch(dir, options, listener).on("error", () => undefined));
    } catch {
      // gone (a directory removed): nothing there to watch
    }
  };
  for (const dir of trees) add(dir, { recursive: true }, (_event, name) => changed(name));
  if (rootFiles.length > 0) add(root, {}, (_event, name) => rootFiles.includes(name) && changed(name));
  return () => {
    for (const watcher of watchers) watcher.close();
  };
}

/**
 * `run` one call at a time, for what `onChange` starts (a build, a restart): a call while it runs
 * asks for one more run once it ends, however many calls came, so the last change is always acted
 * on and runs never overlap. `running()` tells whether one is under way.
 */
export function oneAtATime(run) {
  let running = false;
  let again = false;
  const call = async () => {
    if (running) {
      again = true;
      return;
    }
    running = true;
    try {
      do {
        again = false;
        await run();
      } while (again);
    } finally {
      running = false;
    }
  };
  call.running = () => running;
  return call;
}
