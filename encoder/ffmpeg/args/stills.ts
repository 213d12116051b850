import { join } from "node:path";
import type { SpriteRecipe, ThumbnailsRecipe } from "../../../domain/presets/recipes";
import { fpsOf, frameCountOf, head, requireVideo, type BuildContext, type FfmpegCommand } from "./command";
import { even } from "./sizes";
import { spriteVtt, type SpriteCue } from "./webvtt";

/** Picks exactly these frames (`fps=1/N` does not land on the frames one expects). */
function selectFrames(frames: number[]): string {
  return `select='${frames.map((n) => `eq(n,${n})`).join("+")}'`;
}

/** One thumbnail per `secondsPerThumbnail` of source, within [min, max], never more than there are frames. */
export function thumbnailFrames(recipe: ThumbnailsRecipe, duration: number, frameCount: number): number[] {
  const wanted = Math.min(recipe.max, Math.max(recipe.min, Math.ceil(duration / recipe.secondsPerThumbnail)));
  const count = Math.min(wanted, frameCount);
  // The middle of each of `count` equal slices: no black first frame, no end-credits last frame.
  return Array.from({ length: count }, (_, i) => Math.floor(((i + 0.5) * frameCount) / count));
}

export function thumbnailsCommand(ctx: BuildContext, recipe: ThumbnailsRecipe): FfmpegCommand {
  const video = requireVideo(ctx);
  const frames = thumbnailFrames(recipe, ctx.probe.duration, frameCountOf(video, ctx.probe.duration));
  return {
    args: [
      ...head(ctx.input),
      "-map",
      `0:${video.index}`,
      "-vf",
      `${selectFrames(frames)},scale=w='min(${recipe.maxWidth},iw)':h=-2`,
      // One output image per selected frame, not one per tick of the source's frame rate.
      "-fps_mode",
      "passthrough",
      "-frames:v",
      String(frames.length),
      "-q:v",
      String(recipe.jpegQuality),
      join(ctx.outDir, "thumb_%03d.jpg"),
    ],
  };
}

export interface SpriteGrid {
  /** Source frames between two tiles. */
  frameStep: number;
  tiles: number;
  columns: number;
  rows: number;
  tileWidth: number;
  tileHeight: number;
  cues: SpriteCue[];
}

/** The sheet's layout, from which both the filter and the WebVTT file are written. */
export function spriteGrid(
  recipe: SpriteRecipe,
  duration: number,
  fps: number,
  frameCount: number,
  width: number,
  height: number,
): SpriteGrid {
  const interval = Math.max(recipe.minIntervalSeconds, duration / recipe.maxTiles);
  const frameStep = Math.max(1, Math.round(interval * fps));
  const tiles = Math.min(recipe.maxTiles, Math.ceil(frameCount / frameStep));
  const columns = Math.min(recipe.columns, tiles);
  const rows = Math.ceil(tiles / columns);
  const tileWidth = Math.min(recipe.tileWidth, width - (width % 2));
  const tileHeight = even((tileWidth * height) / width);
  const cues = Array.from({ length: tiles }, (_, i) => ({
    start: (i * frameStep) / fps,
    end: Math.min(((i + 1) * frameStep) / fps, duration),
    x: (i % columns) * tileWidth,
    y: Math.floor(i / columns) * tileHeight,
    width: tileWidth,
    height: tileHeight,
  }));
  return { frameStep, tiles, columns, rows, tileWidth, tileHeight, cues };
}

const SPRITE_IMAGE = "sprite.jpg";
export const SPRITE_VTT = "sprite.vtt";

export function spritePlan(ctx: BuildContext, recipe: SpriteRecipe): { command: FfmpegCommand; vtt: string } {
  const video = requireVideo(ctx);
  const { duration } = ctx.probe;
  const grid = spriteGrid(recipe, duration, fpsOf(video), frameCountOf(video, duration), video.width, video.height);
  return {
    command: {
      args: [
        ...head(ctx.input),
        "-map",
        `0:${video.index}`,
        "-vf",
        `select='not(mod(n,${grid.frameStep}))',scale=${grid.tileWidth}:${grid.tileHeight},setsar=1,tile=${grid.columns}x${grid.rows}`,
        "-fps_mode",
        "passthrough",
        "-frames:v",
        "1",
        // One still image, not an image sequence: no %d pattern in the name.
        "-update",
        "1",
        "-q:v",
        String(recipe.jpegQuality),
        join(ctx.outDir, SPRITE_IMAGE),
      ],
    },
    vtt: spriteVtt(SPRITE_IMAGE, grid.cues),
  };
}
