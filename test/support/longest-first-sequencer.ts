import { relative } from "node:path";
import { BaseSequencer, type TestSpecification } from "vitest/node";

/**
 * The files that take longest, longest first (their times: docs/testing.md#order-and-time). vitest
 * starts a group's files project by project, in the order of their names, and each project's by
 * its last run's durations, or by size when it has none (as on a fresh checkout): faults' longest
 * file would start after every e2e file and run alone at the end, and the render ladders after the
 * cloud project's many short files. Starting the long files first lets the short ones fill in
 * around them. A stale list costs time, never a result.
 */
export const LONGEST_FIRST = [
  "test/render/split/split-encode.test.ts",
  "test/e2e/dev-runner.test.ts",
  "test/e2e/playback.test.ts",
  "test/render/presets/ladders.test.ts",
  "test/e2e/dev-runner-lifecycle.test.ts",
  "test/api/cli.test.ts",
  "test/api/admin-cli.test.ts",
  "test/e2e/dashboard.test.ts",
  "test/e2e/edl.test.ts",
  "test/e2e/split.test.ts",
  "test/security/fuzz-jobs.test.ts",
  "test/e2e/lifecycle.test.ts",
  "test/security/fuzz-edl.test.ts",
  "test/faults/worker-services.test.ts",
  "test/cloud/worker-watch.test.ts",
  "test/render/timeline/effects-render.test.ts",
  "test/cloud/embedded-postgres.test.ts",
  "test/e2e/client-and-cli.test.ts",
  "test/faults/encoder-and-storage.test.ts",
  "test/security-media/hostile-media.test.ts",
  "test/e2e/presets.test.ts",
  "test/render/presets/audio.test.ts",
  "test/cloud/uploader.test.ts",
  "test/cloud/exit-code.test.ts",
  "test/e2e/encoder-resilience.test.ts",
  "test/render/timeline/blend-render.test.ts",
  "test/api/vep-package.test.ts",
  "test/security-media/ssrf.test.ts",
  "test/render/encoder/stream-codecs.test.ts",
  "test/render/encoder/ffmpeg-run-limits.test.ts",
  "test/e2e/encoder-pool.test.ts",
  "test/e2e/dev-runner-private-folder.test.ts",
  "test/faults/database-restart.test.ts",
  "test/faults/lost-messages.test.ts",
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
