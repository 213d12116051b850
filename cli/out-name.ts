import { extname, posix } from "node:path";
import { CONTAINERS, DEFAULT_CONTAINER } from "../domain/edl/validated-edl";
import { findPreset } from "../domain/presets/catalogue";
import { CliFailure, EXIT } from "./exit-codes";

/** A name's extension, lower case and without its dot; "" when it has none. */
const extensionOf = (name: string) => extname(name).slice(1).toLowerCase();

/** What a preset's job writes: its one file's extension, or "zip". Undefined for a preset this CLI does not know: the API judges it. */
export function presetOutput(presetId: string): string | undefined {
  return findPreset(presetId)?.extension;
}

/** What a timeline's job writes: its `output.container`, mp4 when it names none. Undefined for a container the API will refuse anyway. */
export function timelineOutput(edl: unknown): string | undefined {
  const container = (edl as { output?: { container?: unknown } | null } | null)?.output?.container;
  if (container === undefined || container === null) return DEFAULT_CONTAINER;
  return (CONTAINERS as readonly unknown[]).includes(container) ? (container as string) : undefined;
}

/** What a signed download link serves, by the extension of the file it names. */
export function linkedOutput(link: string): string | undefined {
  let path: string;
  try {
    path = new URL(link).pathname;
  } catch {
    return undefined;
  }
  return extensionOf(posix.basename(path)) || undefined;
}

/**
 * Refuses an `--out` whose extension is not that of what will be written (`x.mp4` for an HLS
 * ladder, which arrives as a ZIP archive): the file would not open as its name says. A name
 * without an extension is taken as it is, and so is any name when the output is not known.
 */
export function assertOutName(out: string | undefined, written: string | undefined, writer: string): void {
  const named = out === undefined ? "" : extensionOf(out);
  if (!out || !written || !named || named === written) return;
  const form = written === "zip" ? "a ZIP archive (.zip)" : `a .${written} file`;
  throw new CliFailure(
    EXIT.usage,
    `--out ${out}: ${writer} writes ${form}, not .${named}; name it ${out.slice(0, -named.length)}${written}`,
  );
}
