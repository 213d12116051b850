import { createInterface } from "node:readline";
import { Writable } from "node:stream";

/**
 * One line from stdin. On a terminal the prompt goes to stderr (stdout carries only JSON) and
 * what is typed is not shown: readline takes the terminal into raw mode and echoes into a sink.
 * Piped input (`echo … | npm run admin -- …`) is read as it is.
 */
export function readHiddenLine(prompt: string): Promise<string> {
  const terminal = Boolean(process.stdin.isTTY);
  if (terminal) process.stderr.write(prompt);
  const sink = new Writable({ write: (_chunk, _encoding, done) => done() });
  const rl = createInterface({ input: process.stdin, output: terminal ? sink : undefined, terminal });
  return new Promise((resolve, reject) => {
    rl.once("line", (line) => {
      // Settled before closing: close emits "close" at once, which would reject.
      resolve(line);
      rl.close();
      if (terminal) process.stderr.write("\n");
    });
    // Raw mode turns Ctrl-C into this event instead of a signal.
    rl.once("SIGINT", () => rl.close());
    rl.once("close", () => reject(new Error("No password given")));
  });
}
