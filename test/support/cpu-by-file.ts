/**
 * Setup of every project but workerd: with TEST_CPU_LOG set, each test file's CPU (its vitest
 * worker and every process it starts: FFmpeg, stacks, browsers, CLIs) is appended to that file as
 * `cpu-seconds<TAB>wall-seconds<TAB>path`. Wall time says little on two shared cores, where the
 * files wait on each other; CPU says what a file costs (docs/testing.md#where-the-cpu-goes).
 *
 * It moves the worker into a cgroup of its own under the cgroup v1 `cpuacct` hierarchy (root
 * only), which every process started after inherits, so processes of their own session are counted
 * too. Without TEST_CPU_LOG it does nothing.
 */
import { appendFileSync, mkdirSync, readFileSync, rmdirSync, writeFileSync } from "node:fs";
import { relative } from "node:path";
import { afterAll, beforeAll } from "vitest";

const LOG = process.env.TEST_CPU_LOG;
const HIERARCHY = "/sys/fs/cgroup/cpuacct/vep-test";

if (LOG) {
  let group = "";
  let file = "";
  let startedAt = 0;
  // biome-ignore lint/correctness/noEmptyPattern: vitest requires a pattern for the hook's fixtures, here none
  beforeAll(({}, suite) => {
    file = relative(process.cwd(), suite.file.filepath);
    group = `${HIERARCHY}/${file.replace(/[^a-z0-9]+/gi, "_")}-${process.pid}`;
    mkdirSync(group, { recursive: true });
    writeFileSync(`${group}/cgroup.procs`, String(process.pid));
    startedAt = Date.now();
  });
  afterAll(() => {
    const seconds = Number(readFileSync(`${group}/cpuacct.usage`, "utf8")) / 1e9;
    appendFileSync(LOG, `${seconds.toFixed(1)}\t${((Date.now() - startedAt) / 1000).toFixed(1)}\t${file}\n`);
    // Back to the run's group, and this file's removed; one still holding a process the file started
    // (one outliving it) cannot be, and stays.
    writeFileSync(`${HIERARCHY}/cgroup.procs`, String(process.pid));
    try {
      rmdirSync(group);
    } catch {}
  });
}
