import { relative } from "node:path";
import { BaseSequencer, type TestSpecification } from "vitest/node";

/**
 * The files that take longest, longest first (their times: a full run from a fresh clone on a
 * 2-core host of the CI kind, 2026-11-27). vitest starts a group's files project by project, in the order of their
 * names, and each project's by its last run's durations, or by size when it has none (as on a
 * fresh checkout): faults' 105 s file started after every e2e file and ran alone at the end, and
 * the render ladders after the cloud project's many short files. Starting the long files first
 * lets the short ones fill in around them. A stale list costs time, never a result.
 */
export const LONGEST_FIRST = [
  "test/faults/worker-services.test.ts", // 103 s
  "test/security/fuzz-jobs.test.ts", // 103
  "test/render/split/split-encode.test.ts", // 130 (a full run, 2026-11-28)
  "test/e2e/dev-runner.test.ts", // 87
  "test/api/admin-cli.test.ts", // 81
  "test/e2e/dev-runner-lifecycle.test.ts", // 71
  "test/e2e/split.test.ts", // 80 (2026-11-28)
  "test/e2e/lifecycle.test.ts", // 54
  "test/e2e/presets.test.ts", // 47 (a 1 s source)
  "test/e2e/client-and-cli.test.ts", // 40
  "test/api/cli.test.ts", // 36
  "test/security/keep-alive.test.ts", // 35
  "test/cloud/worker-watch.test.ts", // 31
  "test/security/fuzz-edl.test.ts", // 30
  "test/e2e/edl.test.ts", // 30
  "test/faults/encoder-and-storage.test.ts", // 30
  "test/render/presets/ladders.test.ts", // 30
  "test/security-media/hostile-media.test.ts", // 21
  "test/e2e/dashboard.test.ts", // 21
  "test/e2e/hls-playback.test.ts", // 19
];

/** vitest's own order (groups first, then projects, then durations or size), the files above moved to the front of their group. */
export class LongestFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const rank = (file: TestSpecification) => {
      const at = LONGEST_FIRST.indexOf(relative(this.ctx.config.root, file.moduleId));
      return at === -1 ? LONGEST_FIRST.length : at;
    };
    const group = (file: TestSpecification) => file.project.config.sequence.groupOrder;
    // Array.prototype.sort is stable: files outside the list keep vitest's order.
    return (await super.sort(files)).sort((a, b) => group(a) - group(b) || rank(a) - rank(b));
  }
}
