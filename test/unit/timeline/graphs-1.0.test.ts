import { describe, expect, it } from "vitest";
import { validateEdl } from "../../../domain/edl/validate";
import { compileTimeline } from "../../../encoder/timeline/compile";
import golden from "./graphs-1.0.golden.json";
import { GOLDEN_ASSETS, TIMELINES_1_0 } from "./timelines-1.0";

/** What the compiler gives for a document: its command, graph, files and frame, as JSON stores them. */
function compiledView(document: unknown) {
  const validation = validateEdl(document, "enterprise");
  if (!validation.edl) throw new Error(validation.errors.join("; "));
  return JSON.parse(
    JSON.stringify(compileTimeline(validation.edl, GOLDEN_ASSETS, { workDir: "/w", output: "/w/output.mp4" })),
  );
}

// graphs-1.0.golden.json holds the graphs of the compiler without 1.1 (a539e28): a 1.0 timeline
// renders byte for byte as they say, so this file is never regenerated.
describe("1.0 timelines compile to the very command they did before 1.1", () => {
  it("the golden file covers every document", () => {
    expect(Object.keys(golden).sort()).toEqual(Object.keys(TIMELINES_1_0).sort());
  });
  for (const [name, document] of Object.entries(TIMELINES_1_0)) {
    it(name, () => {
      expect(compiledView(document)).toEqual(golden[name as keyof typeof golden]);
    });
  }
});
