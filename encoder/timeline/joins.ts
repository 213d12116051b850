import type { TransitionEdge } from "../../domain/edl/validated-edl";
import type { GraphBuilder } from "./graph";
import { sampleAt } from "./grid";
import { ffSeconds } from "./time";
import { xfadeName } from "./transitions";

/** A stretch of picture and sound, and the xfade that joins it to the stretch before (1.1). */
export interface Piece {
  video: string;
  audio: string;
  frames: number;
  /** Cross-faded into the previous piece over its last `frames` frames. */
  join?: { type: TransitionEdge["type"]; frames: number };
}

/** Pieces joined by cuts, as one stream: a single piece as it is, several by concat. */
function joinCuts(g: GraphBuilder, pieces: Piece[]): Piece {
  if (pieces.length === 1) return pieces[0];
  const video = g.label("v");
  const audio = g.label("a");
  g.add(`${pieces.map((p) => `${p.video}${p.audio}`).join("")}concat=n=${pieces.length}:v=1:a=1${video}${audio}`);
  return { video, audio, frames: pieces.reduce((n, p) => n + p.frames, 0) };
}

/**
 * Runs of pieces joined by cuts, each cross-faded into the one before: xfade on the picture
 * (its offset half a frame before the overlap's first frame, so rounding never moves it a
 * frame), acrossfade on the sound over the same samples. Output and sound come out exactly as
 * long as the pieces less their overlaps.
 */
export function joinAll(g: GraphBuilder, pieces: Piece[], fps: number): { video: string; audio: string } {
  const [first, ...rest] = pieces;
  const runs: { join: NonNullable<Piece["join"]>; pieces: Piece[] }[] = [];
  const head = [first];
  for (const piece of rest) {
    if (piece.join) runs.push({ join: piece.join, pieces: [piece] });
    else (runs.at(-1)?.pieces ?? head).push(piece);
  }
  let acc = joinCuts(g, head);
  for (const run of runs) {
    const next = joinCuts(g, run.pieces);
    const { type, frames: overlap } = run.join;
    // xfade wants both inputs in one time base; concat's and the clips' differ.
    const [a, b] = [acc.video, next.video].map((label) => g.chain(label, ["settb=AVTB"], "v"));
    const offset = ffSeconds(Math.max(0, (acc.frames - overlap - 0.5) / fps));
    const video = g.chain(
      `${a}${b}`,
      [`xfade=transition=${xfadeName(type)}:duration=${ffSeconds(overlap / fps)}:offset=${offset}`],
      "v",
    );
    const samples = sampleAt(acc.frames, fps) - sampleAt(acc.frames - overlap, fps);
    const audio = g.chain(`${acc.audio}${next.audio}`, [`acrossfade=ns=${samples}:c1=tri:c2=tri`], "a");
    acc = { video, audio, frames: acc.frames - overlap + next.frames };
  }
  return acc;
}

export function piece([video, audio]: string[], frames: number, join?: Piece["join"]): Piece {
  return { video, audio, frames, ...(join ? { join } : {}) };
}
