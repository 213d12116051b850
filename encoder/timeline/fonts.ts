import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { JobFailure } from "../failure";

const run = promisify(execFile);

/** fontconfig pattern syntax: these characters separate fields unless escaped. */
const escapePattern = (family: string) => family.replace(/[\\:,-]/g, (c) => `\\${c}`);

/**
 * The generic families fontconfig's stock configuration defines. Each always resolves, often to
 * the default face itself (sans-serif is DejaVu Sans with Debian's fonts), which the default check below would
 * take for an unknown family.
 */
const GENERIC_FAMILIES = new Set([
  "sans-serif",
  "serif",
  "monospace",
  "cursive",
  "fantasy",
  "system-ui",
  "emoji",
  "math",
]);

/** fc-match answers in milliseconds; one that has not within this is stuck, and is stopped. */
const FC_MATCH_TIMEOUT_MS = 10_000;

const NO_FONTCONFIG =
  "Text cannot be drawn: the encoder could not look up fonts (fontconfig's fc-match is missing or failed).";

async function match(pattern: string): Promise<{ families: string[]; file: string }> {
  let stdout: string;
  try {
    ({ stdout } = await run("fc-match", ["-f", "%{family}|%{file}", pattern], { timeout: FC_MATCH_TIMEOUT_MS }));
  } catch (err) {
    const { code, killed } = err as { code?: unknown; killed?: boolean };
    // Missing, or failing by its own exit status: the encoder's set-up is broken, and another
    // attempt on the same machine would fail the same way.
    if (code === "ENOENT" || (typeof code === "number" && !killed)) throw JobFailure.encoderSetup(NO_FONTCONFIG);
    // Stopped (stuck past its timeout), or not started for want of processes or descriptors
    // (EAGAIN, EMFILE): a passing state of this machine, which another attempt may not meet.
    throw JobFailure.internal(err);
  }
  const [families = "", file = ""] = stdout.split("|");
  // Answering nothing usable: as broken as missing.
  if (!file) throw JobFailure.encoderSetup(NO_FONTCONFIG);
  return { families: families.split(",").map((f) => f.trim().toLowerCase()), file };
}

/**
 * The font file for a family and weight. For an unknown family fc-match does not fail: it
 * silently answers its default. A family counts as available when it is a generic family, or
 * fontconfig matches it by name or by an alias it defines (Arial → Liberation Sans), i.e. when
 * the answer is not the default.
 */
export async function resolveFont(family: string, weight: "normal" | "bold"): Promise<string> {
  const [wanted, fallback] = await Promise.all([
    match(`${escapePattern(family)}${weight === "bold" ? ":bold" : ""}`),
    match("no-such-family-at-all"),
  ]);
  const known = GENERIC_FAMILIES.has(family.toLowerCase()) || wanted.families.includes(family.toLowerCase());
  if (!known && wanted.families[0] === fallback.families[0]) {
    throw JobFailure.invalidTimeline(
      `Font family "${family}" is not available on the encoder; use a family fontconfig knows, such as Arial, Helvetica, Times New Roman, Courier New or DejaVu Sans.`,
    );
  }
  return wanted.file;
}
