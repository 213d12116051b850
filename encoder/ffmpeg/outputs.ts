import { readdir } from "node:fs/promises";
import { join } from "node:path";
import { JobFailure } from "../failure";
import type { PlannedOutput } from "./args";

/** What a job produced in its work dir: one file to upload as is, or many to upload as one ZIP. */
export type JobOutput =
  | { kind: "file"; path: string; fileName: string; contentType: string }
  | { kind: "zip"; dir: string; files: string[]; fileName: string };

/** Every file under `dir`, as sorted `/`-separated paths relative to it. */
async function listFiles(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  return entries
    .filter((e) => e.isFile())
    .map((e) =>
      join(e.parentPath, e.name)
        .slice(dir.length + 1)
        .split("\\")
        .join("/"),
    )
    .sort();
}

/**
 * What a preset's out dir yields for upload: its one file, or every file it holds for the ZIP
 * (segment counts are only known once FFmpeg has run). Download names carry the preset id.
 */
export async function collectOutput(presetId: string, outDir: string, planned: PlannedOutput): Promise<JobOutput> {
  if (planned.kind === "file") {
    const extension = planned.file.slice(planned.file.lastIndexOf(".") + 1);
    return {
      kind: "file",
      path: join(outDir, planned.file),
      fileName: `${presetId}.${extension}`,
      contentType: planned.contentType,
    };
  }
  const files = await listFiles(outDir);
  if (files.length === 0) throw JobFailure.ffmpeg("FFmpeg produced no output files.");
  return { kind: "zip", dir: outDir, files, fileName: `${presetId}.zip` };
}
