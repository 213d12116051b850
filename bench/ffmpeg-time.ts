import { spawn } from "node:child_process";

/**
 * Wall seconds of one FFmpeg run; rejects with the end of its stderr if it fails. With `cpu`
 * (taskset's list), FFmpeg is held to those cores.
 */
export function timeFfmpeg(args: string[], opts: { cpu?: string } = {}): Promise<number> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const [command, ...rest] =
      opts.cpu === undefined ? ["ffmpeg", ...args] : ["taskset", "-c", opts.cpu, "ffmpeg", ...args];
    const child = spawn(command, rest, { stdio: ["ignore", "ignore", "pipe"] });
    let stderr = "";
    child.stderr.on("data", (d) => (stderr = (stderr + d).slice(-4000)));
    child.on("exit", (code) =>
      code === 0 ? resolve((performance.now() - started) / 1000) : reject(new Error(stderr)),
    );
  });
}
