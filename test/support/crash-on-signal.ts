import { fileURLToPath } from "node:url";

const preload = fileURLToPath(new URL("./crash-on-signal-preload.mjs", import.meta.url));

/** Environment for an encoder that throws outside any job when it receives SIGUSR2. */
export function crashOnSignalEnv(): Record<string, string> {
  return { NODE_OPTIONS: [process.env.NODE_OPTIONS, `--import ${preload}`].filter(Boolean).join(" ") };
}
