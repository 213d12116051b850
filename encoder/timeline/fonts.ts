import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { PermanentJobError } from "../jobs/failures";

const run = promisify(execFile);

/** fontconfig pattern syntax: these characters separate fields unless escaped. */
const escapePattern = (family: string) => family.replace(/[\\:,-]/g, (c) => `\\${c}`);

async function match(pattern: string): Promise<{ families: string[]; file: string }> {
  const { stdout } = await run("fc-match", ["-f", "%{family}|%{file}", pattern]);
  const [families, file] = stdout.split("|");
  return { families: families.split(",").map((f) => f.trim().toLowerCase()), file };
}

/**
 * The font file for a family and weight. fc-match never fails: for an unknown family it
 * silently answers its default. A family counts as available when fontconfig matches it by name
 * or by an alias it defines (Arial → Liberation Sans), i.e. when the answer is not the default.
 */
export async function resolveFont(family: string, weight: "normal" | "bold"): Promise<string> {
  const [wanted, fallback] = await Promise.all([
    match(`${escapePattern(family)}${weight === "bold" ? ":bold" : ""}`),
    match("no-such-family-at-all"),
  ]);
  const named = wanted.families.includes(family.toLowerCase());
  if (!named && wanted.families[0] === fallback.families[0]) {
    throw new PermanentJobError(`Font family "${family}" is not available on the encoder; use a family fontconfig knows, such as Arial, Helvetica, Times New Roman, Courier New or DejaVu Sans.`);
  }
  return wanted.file;
}
