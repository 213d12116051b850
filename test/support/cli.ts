import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";

export const VEP_BIN = fileURLToPath(new URL("../../bin/vep.mjs", import.meta.url));

/** `Json`: what the test expects a --json run to print (not checked here; the test's assertions check it). */
export interface CliRun<Json = unknown> {
  code: number;
  stdout: string;
  stderr: string;
  /** stdout parsed as JSON (for --json runs). */
  json: Json;
}

/** Runs the vep CLI as a user would: a separate process, its key and service from the environment. */
export function vep<Json = unknown>(
  args: string[],
  env: { api: string; key?: string },
  timeoutMs = 240_000,
): Promise<CliRun<Json>> {
  return runCommand<Json>(process.execPath, [VEP_BIN, ...args], { env: vepEnv(env), timeoutMs });
}

/** The environment with vep's service and key, and no key of the caller's when none is given. */
export function vepEnv(env: { api: string; key?: string }): NodeJS.ProcessEnv {
  const childEnv: NodeJS.ProcessEnv = { ...process.env, VEP_API_URL: env.api };
  if (env.key) childEnv.VEP_API_KEY = env.key;
  else delete childEnv.VEP_API_KEY;
  return childEnv;
}

/** Runs a command to its end, whatever its exit code, with what it printed. */
export function runCommand<Json = unknown>(
  file: string,
  args: string[],
  options: { env?: NodeJS.ProcessEnv; cwd?: string; timeoutMs?: number } = {},
): Promise<CliRun<Json>> {
  return new Promise((resolve) => {
    execFile(
      file,
      args,
      { env: options.env, cwd: options.cwd, timeout: options.timeoutMs ?? 240_000, maxBuffer: 16 * 1024 * 1024 },
      (error, stdout, stderr) => {
        let json: unknown;
        try {
          json = JSON.parse(stdout);
        } catch {
          json = undefined;
        }
        const code = error ? (typeof error.code === "number" ? error.code : -1) : 0;
        resolve({ code, stdout, stderr, json: json as Json });
      },
    );
  });
}
