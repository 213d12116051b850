import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { SplitPlan } from "../../domain/split";
import { audioPieceCommand, concatList, joinCommand, partCommand, pieceCommand } from "../../encoder/ffmpeg/args/split";
import { probeFile } from "../../encoder/ffmpeg/probe";
import { runFfmpeg } from "../../encoder/ffmpeg/run";
import { readSplitFacts } from "../../encoder/split/facts";
import { planSplit, splittableRecipe, type SplitSettings } from "../../encoder/split/plan";

/**
 * A split encode's FFmpeg work, done in one folder: the plan, the pieces, every part and the
 * join, with the encoder's own argument builders. The distributed path (storage, the Worker,
 * several encoders) is the e2e suite's; this checks what the parts and the join make of the
 * frames and the sound.
 */
export async function splitLocally(
  source: string,
  presetId: string,
  dir: string,
  settings: SplitSettings,
): Promise<{ plan: SplitPlan | null; outDir: string; file: string }> {
  const recipe = splittableRecipe(presetId);
  if (!recipe) throw new Error(`${presetId} does not split`);
  const probe = await probeFile(source);
  if (!probe.video) throw new Error("no video");
  const facts = await readSplitFacts(source, { video: probe.video.index, audio: probe.audio[0]?.index ?? null }, {});
  const plan = facts && planSplit(recipe, probe, facts, settings);
  const outDir = join(dir, "out");
  await mkdir(outDir, { recursive: true });
  const file = recipe.kind === "progressive" ? `output.${recipe.container}` : "";
  if (!plan) return { plan, outDir, file };
  const video = probe.video;
  const partFiles = await Promise.all(
    plan.parts.map(async (part) => {
      const piece = join(dir, `piece-${part.index}.mkv`);
      await runFfmpeg(pieceCommand(source, video.index, part, piece).args);
      const pieceProbe = await probeFile(piece);
      if (!pieceProbe.video) throw new Error("a piece without video");
      const out = join(dir, `part-${part.index}.nut`);
      await runFfmpeg(partCommand(recipe, plan, part, { path: piece, video: pieceProbe.video }, out).args);
      return out;
    }),
  );
  const audioIndex = probe.audio[0]?.index;
  const audio = plan.audio && audioIndex !== undefined ? join(dir, "audio") : null;
  if (audio && audioIndex !== undefined) await runFfmpeg(audioPieceCommand(source, probe.audio[0], audio).args);
  const list = join(dir, "parts.ffconcat");
  await writeFile(list, concatList(plan, partFiles));
  await runFfmpeg(joinCommand(recipe, plan, { list, audio }, { dir: outDir, file }).args);
  return { plan, outDir, file };
}
