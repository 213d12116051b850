import { fileURLToPath } from "node:url";

const preload = fileURLToPath(new URL("./exit-with-parent-preload.mjs", import.meta.url));

/**
 * Node arguments that make a child of `npm run dev` end when the runner's process does,
 * however the runner ends (a SIGKILL included). The child's stdin must be a pipe from the
 * runner (`stdio: ["pipe", …]`), which the runner never writes to.
 */
export const EXIT_WITH_PARENT_ARGS = ["--import", preload];

/** `group`: the child leads a process group of its own (spawned detached), and all of it goes. */
export function exitWithParentEnv(what: "process" | "group"): Record<string, string> {
  return { EXIT_WITH_PARENT: what };
}
