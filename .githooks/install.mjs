// npm's prepare (npm install, npm ci): points this checkout's git at .githooks, whose commit-msg
// hook checks each commit's message. Outside a checkout of this project, or without git, it does nothing.
import { execFileSync } from "node:child_process";
import { realpathSync } from "node:fs";
import { dirname } from "node:path";
import { fileURLToPath } from "node:url";

const HOOKS = ".githooks";
const root = dirname(dirname(fileURLToPath(import.meta.url)));
const git = (...args) =>
  execFileSync("git", args, { cwd: root, encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] }).trim();

try {
  // A package unpacked inside someone else's repository is not that repository's checkout.
  if (realpathSync(git("rev-parse", "--show-toplevel")) === realpathSync(root)) {
    git("config", "core.hooksPath", HOOKS);
  }
} catch {
  // No git on the PATH, or no work tree here: there is nothing to install into.
}
