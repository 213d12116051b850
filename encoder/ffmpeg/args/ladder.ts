import { join } from "node:path";
import {
  HLS_MASTER_PLAYLIST,
  selectRungs,
  type LadderRecipe,
  type Packaging,
  type Rung,
} from "../../../domain/presets/recipes";
import {
  fpsOf,
  head,
  kbit,
  requireVideo,
  videoAudioArgs,
  videoAudioFormat,
  type BuildContext,
  type FfmpegCommand,
} from "./command";
import { videoEncoderArgs } from "./video-encoder";

const variantName = (r: Rung) => `${r.height}p`;

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

/** Per-variant rate control: HLS writes each variant's BANDWIDTH as 1.1 × (-b:v + audio). */
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

export function hlsOutput(
  outDir: string,
  packaging: Extract<Packaging, { format: "hls" }>,
  rungs: Rung[],
  withAudio: boolean,
): string[] {
  const { segmentSeconds, segmentType, playlist } = packaging;
  const live = playlist === "event";
  const streamMap = rungs.map((r, i) =>
    withAudio ? `v:${i},a:${i},name:${variantName(r)}` : `v:${i},name:${variantName(r)}`,
  );
  const extension = segmentType === "fmp4" ? "m4s" : "ts";
  return [
    "-f",
    "hls",
    "-hls_time",
    String(segmentSeconds),
    "-hls_playlist_type",
    playlist,
    // An event playlist only grows: keep every segment in it (the default keeps the last 5).
    ...(live ? ["-hls_list_size", "0"] : []),
    "-hls_segment_type",
    segmentType,
    ...(segmentType === "fmp4" ? ["-hls_fmp4_init_filename", "init.mp4"] : []),
    "-hls_flags",
    // Every segment starts on a keyframe; live playlists also date segments for latency tracking.
    live ? "independent_segments+program_date_time" : "independent_segments",
    "-hls_segment_filename",
    join(outDir, "%v", `seg_%05d.${extension}`),
    "-master_pl_name",
    HLS_MASTER_PLAYLIST,
    "-var_stream_map",
    streamMap.join(" "),
    join(outDir, "%v", "index.m3u8"),
  ];
}

export function dashOutput(
  outDir: string,
  packaging: Exclude<Packaging, { format: "hls" }>,
  withAudio: boolean,
): string[] {
  const lowLatency = packaging.format === "dash" && packaging.lowLatency;
  return [
    "-f",
    "dash",
    "-seg_duration",
    String(packaging.segmentSeconds),
    "-use_template",
    "1",
    // Low-latency players compute segment numbers from the clock: a template without timeline.
    "-use_timeline",
    lowLatency ? "0" : "1",
    ...(lowLatency
      ? // Chunked CMAF: each 1 s segment is written as 0.2 s fragments a player can fetch early.
        ["-ldash", "1", "-streaming", "1", "-frag_type", "duration", "-frag_duration", "0.2"]
      : []),
    ...(packaging.format === "cmaf" ? ["-hls_playlist", "1", "-hls_master_name", HLS_MASTER_PLAYLIST] : []),
    "-adaptation_sets",
    withAudio ? "id=0,streams=v id=1,streams=a" : "id=0,streams=v",
    "-init_seg_name",
    "init-$RepresentationID$.m4s",
    "-media_seg_name",
    "chunk-$RepresentationID$-$Number%05d$.m4s",
    join(outDir, "manifest.mpd"),
  ];
}

/**
 * Every streaming ladder in ONE FFmpeg process: decoded once, all rungs encoded side by side
 * with keyframes every `gopSeconds` (same frame numbers on every rung), then packaged as HLS
 * (a variant per rung, master playlist), DASH (video and audio adaptation sets) or CMAF (one
 * fMP4 set, DASH MPD and HLS master).
 */
export function ladderCommand(ctx: BuildContext, recipe: LadderRecipe): FfmpegCommand {
  const video = requireVideo(ctx);
  const audio = ctx.probe.audio[0];
  const rungs = selectRungs(recipe.rungs, video.height);
  const gopFrames = Math.round(recipe.gopSeconds * fpsOf(video));
  const { packaging } = recipe;
  const audioMap = audio ? ["-map", `0:${audio.index}`] : [];
  // fMP4 segments (HLS fMP4, DASH, CMAF) are ISO BMFF; MPEG-TS segments are not.
  const isoBmff = packaging.format !== "hls" || packaging.segmentType === "fmp4";
  const encoder = videoEncoderArgs({ encoder: recipe.video, gopFrames, isoBmff });
  if (packaging.format === "hls") {
    return {
      args: [
        ...head(ctx.input),
        "-filter_complex",
        ladderFilter(`[0:${video.index}]`, rungs),
        // Audio is muxed into every variant, so it is mapped (and encoded) once per rung.
        ...rungs.flatMap((_, i) => ["-map", `[v${i}]`, ...audioMap]),
        ...encoder,
        ...rungRateArgs(rungs),
        ...(audio
          ? [...videoAudioFormat(recipe.audioCodec), ...rungs.flatMap((r, i) => [`-b:a:${i}`, `${r.audioBitrate}k`])]
          : []),
        ...hlsOutput(ctx.outDir, packaging, rungs, Boolean(audio)),
      ],
    };
  }
  return {
    args: [
      ...head(ctx.input),
      "-filter_complex",
      ladderFilter(`[0:${video.index}]`, rungs),
      ...rungs.flatMap((_, i) => ["-map", `[v${i}]`]),
      // One audio representation, at the top kept rung's bitrate, shared by every video rung.
      ...audioMap,
      ...encoder,
      ...rungRateArgs(rungs),
      ...(audio ? videoAudioArgs(recipe.audioCodec, kbit(rungs[0].audioBitrate)) : []),
      ...dashOutput(ctx.outDir, packaging, Boolean(audio)),
    ],
  };
}
