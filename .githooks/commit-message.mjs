// The commit message convention (CONTRIBUTING.md#commit-messages), as the commit-msg hook beside
// this file checks it.

export const MAX_SUBJECT = 72;

/** `area: summary`, the area a lowercase word or words joined by `/` (`encoder/split`). */
const AREA_PREFIX = /^[a-z][a-z0-9-]*(\/[a-z0-9][a-z0-9-]*)*: \S/;

/** Subjects git writes itself, which keep their own form. */
const GITS_OWN = [/^Merge /, /^Revert "/, /^(fixup|squash|amend)! /];

/** The message's lines as git will store them: comment lines, and everything under the scissors line, gone. */
export function cleaned(message) {
  const lines = message.replaceAll("\r\n", "\n").split("\n");
  const scissors = lines.findIndex((line) => /^# -+ >8 -+$/.test(line));
  const kept = (scissors === -1 ? lines : lines.slice(0, scissors))
    .filter((line) => !line.startsWith("#"))
    .map((line) => line.trimEnd());
  while (kept.length > 0 && kept[0] === "") kept.shift();
  while (kept.length > 0 && kept.at(-1) === "") kept.pop();
  return kept;
}

/** What is wrong with a commit message, one sentence each; none for a good one. */
export function messageProblems(message) {
  const [subject, second] = cleaned(message);
  if (subject === undefined) return ["The message is empty."];
  if (GITS_OWN.some((form) => form.test(subject))) return [];
  const problems = [];
  if (!AREA_PREFIX.test(subject))
    problems.push(
      "The subject does not start with its area: `area: summary` or `area/sub: summary`, the area lowercase.",
    );
  const length = [...subject].length;
  if (length > MAX_SUBJECT)
    problems.push(`The subject is ${length} characters; at most ${MAX_SUBJECT}. Say the rest in the body.`);
  if (subject.endsWith(".")) problems.push("The subject ends in a period.");
  if (second !== undefined && second !== "")
    problems.push("The second line is not blank: a blank line goes between the subject and the body.");
  return problems;
}
