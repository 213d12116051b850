import { spawn } from "node:child_process";

/** Wall seconds of one FFmpeg run; rejects with the end of its stderr if it fails. */
export function timeFfmpeg(args: string[]): Promise<number> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn("ffmpeg", args, { stdio: ["ignore", "ignore", "pipe"] });
    let stderr = "";
    child.stderr.on("data", (d) => (stderr = (stderr + d).slice(-4000)));
    child.on("exit", (code) =>
      code === 0 ? resolve((performance.now() - started) / 1000) : reject(new Error(stderr)),
    );
  });
}
