import { describe, expect, it } from "vitest";
import { MAX_SUBJECT, messageProblems } from "../../../.githooks/commit-message.mjs";

/** The problems' first words, enough to tell which rule spoke. */
const rulesBroken = (message: string) => messageProblems(message).map((problem) => problem.split(":")[0]);

const NO_AREA = "The subject does not start with its area";
const TOO_LONG = (n: number) => `The subject is ${n} characters; at most ${MAX_SUBJECT}. Say the rest in the body.`;

describe("a commit message (CONTRIBUTING.md#commit-messages)", () => {
  it("takes `area: summary` and `area/sub: summary`, alone or with a body after a blank line", () => {
    for (const good of [
      "uploads: require a size and sign it",
      "encoder/split: end a part on a source keyframe",
      "e2e: wait for the join's claim",
      "vep-package: ship the declarations",
      "docs: say what the sweep does\n\nThe guide said how it came to be; now it says what it does.\n",
      "bench/results: one line per run\n\nFigures: 0.58 against a ceiling of 0.56.\nTried: a table in the guide.",
    ])
      expect(messageProblems(good), good).toEqual([]);
  });

  it("refuses a subject without a lowercase area: none, capitals, words, a colon inside, no space after it", () => {
    for (const bad of [
      "Add a thing",
      "Docs: say what the sweep does",
      "local cloud: send every request on",
      "bench:split: a second measure",
      "docs:say what the sweep does",
      "docs: ",
      ": nothing",
      " docs: leading space",
    ])
      expect(rulesBroken(bad), bad).toEqual([NO_AREA]);
  });

  it("counts the subject's characters, not its bytes: 72 pass, 73 do not", () => {
    const subject = (n: number) => `docs: ${"é".repeat(n - 6)}`;
    expect(messageProblems(subject(MAX_SUBJECT))).toEqual([]);
    expect(messageProblems(subject(MAX_SUBJECT + 1))).toEqual([TOO_LONG(MAX_SUBJECT + 1)]);
  });

  it("refuses a subject ending in a period, and a body with no blank line before it", () => {
    expect(rulesBroken("docs: say what the sweep does.")).toEqual(["The subject ends in a period."]);
    expect(rulesBroken("docs: say what the sweep does\nand why")).toEqual(["The second line is not blank"]);
  });

  it("says every rule a message breaks", () => {
    const subject = `Docs ${"x".repeat(80)}.`;
    expect(messageProblems(`${subject}\nbody`)).toEqual([
      expect.stringContaining(NO_AREA),
      TOO_LONG(subject.length),
      "The subject ends in a period.",
      expect.stringContaining("The second line is not blank"),
    ]);
  });

  it("leaves git's own subjects as git writes them: merges, reverts, fixups and squashes", () => {
    const long = "x".repeat(100);
    for (const own of [
      "Merge branch 'uploads' into main",
      `Revert "docs: ${long}"\n\nThis reverts commit 8b2b04c.`,
      `fixup! docs: ${long}`,
      `squash! docs: ${long}`,
    ])
      expect(messageProblems(own), own).toEqual([]);
  });

  it("reads the message as git stores it: comment lines, the diff under the scissors and CRLFs gone", () => {
    const edited = [
      "",
      "docs: say what the sweep does",
      "# Please enter the commit message for your changes.",
      "",
      "The body.",
      "# ------------------------ >8 ------------------------",
      "# Do not modify or remove the line above.",
      "diff --git a/docs/operations.md b/docs/operations.md",
      "This line of the diff is no second paragraph. It is not part of the message.",
    ].join("\r\n");
    expect(messageProblems(edited)).toEqual([]);
    expect(messageProblems("# only comments\n\n")).toEqual(["The message is empty."]);
  });
});
