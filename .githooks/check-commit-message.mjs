// Run by the commit-msg hook with the file git wrote the message to: exits 1, saying why, when
// the message breaks the convention.
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { cleaned, messageProblems } from "./commit-message.mjs";

const file = resolve(process.argv[2]);
const message = readFileSync(file, "utf8");
const problems = messageProblems(message);
if (problems.length > 0) {
  process.stderr.write(
    [
      "commit-msg: this message does not follow the convention in CONTRIBUTING.md#commit-messages:",
      `  ${JSON.stringify(cleaned(message)[0] ?? "")}`,
      ...problems.map((problem) => `  - ${problem}`),
      `The message is kept in ${file}; edit it and commit again: git commit -e -F ${file}`,
      "",
    ].join("\n"),
  );
  process.exitCode = 1;
}
