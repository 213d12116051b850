import { createInterface } from "node:readline";

/**
 * One line from stdin. On a terminal the prompt goes to stderr (stdout carries only JSON) and
 * what is typed is not echoed; piped input (`echo … | npm run admin -- …`) is read as it is.
 */
export function readHiddenLine(prompt: string): Promise<string> {
  const terminal = Boolean(process.stdin.isTTY);
  if (terminal) process.stderr.write(prompt);
  const rl = createInterface({ input: process.stdin, terminal });
  if (terminal) {
    // readline echoes through _writeToOutput; silencing it hides the typed characters.
    (rl as unknown as { _writeToOutput: (s: string) => void })._writeToOutput = () => undefined;
  }
  return new Promise((resolve, reject) => {
    rl.once("line", (line) => {
      rl.close();
      if (terminal) process.stderr.write("\n");
      resolve(line);
    });
    rl.once("close", () => reject(new Error("No password given")));
  });
}
