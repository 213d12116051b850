import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { TRANSITION_TYPES } from "../../../domain/edl/validated-edl";
import { xfadeName } from "../../../encoder/timeline/transitions";

const run = promisify(execFile);

describe("1.1 transition names", () => {
  it("every transition but fade is a transition this FFmpeg's xfade has", async () => {
    const { stdout } = await run("ffmpeg", ["-hide_banner", "-h", "filter=xfade"]);
    // The option's values, one a line under `transition`: "     wipeleft  1  ..FV... wipe left transition".
    const known = new Set([...stdout.matchAll(/^ {5}(\w+)\s+-?\d+\s/gm)].map((m) => m[1]));
    expect(known.has("fade")).toBe(true);
    const missing = TRANSITION_TYPES.filter((t) => t !== "fade" && !known.has(xfadeName(t)));
    expect(known.size).toBeGreaterThan(40);
    expect(missing).toEqual([]);
  });
});
