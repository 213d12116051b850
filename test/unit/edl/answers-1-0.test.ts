import { describe, expect, it } from "vitest";
import { validateEdl } from "../../../domain/edl/validate";
import type { PlanId } from "../../../domain/plans";
import { validateEdlExamples } from "../../../worker/routes/edl/examples";
import golden from "./answers-1-0.golden.json";

/**
 * Version 1.1 leaves 1.0 alone: every 1.0 document gets, byte for byte, the answer of the
 * validator without 1.1 (a539e28), which answers-1-0.golden.json holds for the reference's
 * examples (worker/routes/edl/examples.ts), the timeline of docs/api.md, a 1.0 document using the
 * five properties and a `caption` track, and fast-check samples (seed 29) of valid timelines,
 * valid ones with up to four values replaced, and EDL-shaped junk, on the Starter and Enterprise
 * plans. Each input is stored beside its answer, so the arbitraries may change.
 */
const cases = golden as { name: string; plan: PlanId; edl: unknown; answer: unknown }[];

describe("contract §5.7 PUT /edl › 1.0 answers are unchanged by 1.1", () => {
  it("the snapshot holds the reference's examples and many of each kind of input", () => {
    const names = new Set(cases.map((c) => c.name));
    for (const [example, { value }] of Object.entries(validateEdlExamples)) {
      if (value.edl.version === "1.0") expect(names).toContain(`examples.ts ${example}`);
    }
    expect(names).toContain("docs/api.md json block 0");
    expect(cases.filter((c) => (c.answer as { valid: boolean }).valid).length).toBeGreaterThan(50);
    expect(cases.length).toBeGreaterThan(200);
  });

  it.each(cases.map((c) => [`${c.name} on ${c.plan}`, c] as const))("%s", (_, { edl, plan, answer }) => {
    // Through JSON, as the routes send it: the bytes of the answer are what must not change.
    expect(JSON.stringify(validateEdl(edl, plan))).toBe(JSON.stringify(answer));
  });
});
