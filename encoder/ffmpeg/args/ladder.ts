import type { Rung } from "../../../domain/presets/recipes";

/**
 * One decode feeding every rung, cascaded: each rung is scaled from the one above it rather
 * than from the source, so every scale works on a smaller picture (a 4-rung 1080p ladder ran
 * ~7% faster than scaling each copy of the source). Width follows the aspect; scale adjusts
 * the sample aspect ratio so all rungs keep the same display aspect, which the DASH muxer
 * requires within an adaptation set.
 */
export function ladderFilter(source: string, rungs: Rung[]): string {
  return rungs
    .map((r, i) => {
      const input = i === 0 ? source : `[c${i - 1}]`;
      const scale = `scale=-2:${r.height}${i === 0 ? ",format=yuv420p" : ""}`;
      const last = i === rungs.length - 1;
      return last ? `${input}${scale}[v${i}]` : `${input}${scale},split=2[v${i}][c${i}]`;
    })
    .join(";");
}

/** Per-rung rate control: each rung's average, its VBV cap (the master's BANDWIDTH) and buffer. */
export function rungRateArgs(rungs: Rung[]): string[] {
  return rungs.flatMap((r, i) => [
    `-b:v:${i}`,
    `${r.videoBitrate}k`,
    `-maxrate:v:${i}`,
    `${r.maxrate}k`,
    `-bufsize:v:${i}`,
    `${r.bufsize}k`,
  ]);
}
