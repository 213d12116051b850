import { describe, expect, it } from "vitest";
import { describeDetails } from "../../../cli/output";

describe("the one-line message's details", () => {
  it("an invalid timeline's errors: the first three, then how many more", () => {
    const errors = [
      "version: is required",
      "timeline.tracks[0].clips[0].out: must be greater than in",
      "Too many clips for the Starter plan: 6 (maximum 5)",
      "fourth",
      "fifth",
    ];
    expect(describeDetails({ error: "EDL validation failed", message: "The timeline has 5 error(s)", errors })).toBe(
      " (version: is required; timeline.tracks[0].clips[0].out: must be greater than in; Too many clips for the Starter plan: 6 (maximum 5); and 2 more)",
    );
    expect(
      describeDetails({
        error: "EDL validation failed",
        message: "The timeline has 1 error(s)",
        errors: ["version: is required"],
      }),
    ).toBe(" (version: is required)");
  });

  it("a Validation error's fields, named", () => {
    const details = [1, 2, 3, 4].map((n) => ({ field: `f${n}`, message: "Invalid input" }));
    expect(describeDetails({ error: "Validation error", details: details.slice(0, 1) })).toBe(" (f1: Invalid input)");
    expect(describeDetails({ error: "Validation error", details })).toBe(
      " (f1: Invalid input; f2: Invalid input; f3: Invalid input; and 1 more)",
    );
  });

  it("nothing for a body that names no problem", () => {
    expect(describeDetails({ error: "Not found", message: "Job not found" })).toBe("");
    expect(describeDetails(undefined)).toBe("");
  });
});
