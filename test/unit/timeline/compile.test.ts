import { describe, expect, it } from "vitest";
import { validateEdl } from "../../../domain/edl/validate";
import { MAX_PICTURE_PIXELS } from "../../../encoder/ffmpeg/picture-limits";
import { atempoChain } from "../../../encoder/timeline/audio";
import { compileTimeline, fontKey, type TimelineAssets } from "../../../encoder/timeline/compile";
import { placeBox, overlaySize } from "../../../encoder/timeline/layout";
import { spanOf } from "../../../encoder/timeline/grid";

const A = "https://media.example.com/a.mp4";
const B = "https://media.example.com/b.mp4";
const SILENT = "https://media.example.com/silent.mp4";
const TONE = "https://media.example.com/tone.m4a";
const LOGO = "https://media.example.com/logo.png";

const assets: TimelineAssets = {
  media: new Map([
    [A, { path: "/w/a", hasVideo: true, hasAudio: true, width: 1280, height: 720, fps: 25 }],
    [B, { path: "/w/b", hasVideo: true, hasAudio: true, width: 640, height: 480, fps: 30 }],
    [SILENT, { path: "/w/s", hasVideo: true, hasAudio: false, width: 1280, height: 720, fps: 25 }],
    [TONE, { path: "/w/t", hasVideo: false, hasAudio: true }],
  ]),
  images: new Map([[LOGO, { path: "/w/logo", width: 200, height: 100 }]]),
  fonts: new Map([
    [fontKey({ fontFamily: "Arial", fontWeight: "normal" }), "/fonts/Sans.ttf"],
    [fontKey({ fontFamily: "Arial", fontWeight: "bold" }), "/fonts/Sans-Bold.ttf"],
  ]),
};

function compile(doc: Record<string, unknown>) {
  const result = validateEdl({ version: "1.0", ...doc }, "enterprise");
  expect(result.errors).toEqual([]);
  return compileTimeline(result.edl!, assets, { workDir: "/w", output: "/w/output.mp4" });
}
const graphOf = (c: { graph: string }) => c.graph;
const video = (clips: unknown[]) => ({ type: "video", clips });

describe("timeline compiler: one FFmpeg invocation, one filter graph", () => {
  it("contract §3.12: transform, crop, filters, transition and freeze pass validation and change nothing in the encode", () => {
    const clips = [
      { id: "a", src: A, in: 0, out: 4, startTime: 0 },
      { id: "b", src: B, in: 1, out: 3, startTime: 4, speed: 2 },
    ];
    const unapplied = {
      transform: { scale: 2, rotate: 45 },
      crop: { top: 0.1 },
      filters: ["blur", { type: "sepia" }],
      transition: { type: "fade", duration: 1 },
      freeze: true,
    };
    const plain = compile({ timeline: { tracks: [video(clips)] } });
    const withThem = compile({ timeline: { tracks: [video(clips.map((clip) => ({ ...clip, ...unapplied })))] } });
    expect(withThem).toEqual(plain);
  });

  it("a single clip: its own input with -ss/-t, fitted to the first clip's size and rate", () => {
    const c = compile({ timeline: { tracks: [video([{ id: "a", src: A, in: 2, out: 5, startTime: 0 }])] } });
    expect(c.frame).toEqual({ width: 1280, height: 720 });
    expect(c.fps).toBe(25);
    expect(c.duration).toBe(3);
    expect(c.args.slice(0, 3)).toEqual(["-hide_banner", "-nostdin", "-y"]);
    expect(c.args.slice(3, 13)).toEqual([
      "-protocol_whitelist",
      "file",
      "-max_pixels",
      String(MAX_PICTURE_PIXELS),
      "-ss",
      "2",
      "-t",
      "3",
      "-i",
      "/w/a",
    ]);
    expect(c.args.filter((a) => a === "-i")).toHaveLength(1);
    expect(graphOf(c)).toBe(
      "[0:v:0]setpts=(PTS-STARTPTS)/1,fps=25,scale=1280:720:force_original_aspect_ratio=decrease:force_divisible_by=2,pad=1280:720:(ow-iw)/2:(oh-ih)/2:color=black,setsar=1,format=yuv420p,tpad=stop_mode=clone:stop=75,trim=end_frame=75,setpts=PTS-STARTPTS[v0];" +
        "[0:a:0]asetpts=PTS-STARTPTS,aresample=48000,aformat=sample_fmts=fltp:channel_layouts=stereo,apad,atrim=end_sample=144000,asetpts=PTS-STARTPTS[a1];" +
        "[v0][a1]concat=n=1:v=1:a=1[v2][a3]",
    );
    // The graph is read from a file: as an argument, a large timeline's passed Linux's 128 KiB limit on one.
    expect(c.args.slice(c.args.indexOf("-filter_complex_script"), c.args.indexOf("-map"))).toEqual([
      "-filter_complex_script",
      "/w/graph.txt",
    ]);
    expect(c.files).toContainEqual({ path: "/w/graph.txt", content: c.graph });
    expect(c.args.slice(c.args.indexOf("-map"))).toEqual([
      "-map",
      "[v2]",
      "-map",
      "[a3]",
      "-c:v",
      "libx264",
      "-preset",
      "veryfast",
      "-crf",
      "23",
      "-pix_fmt",
      "yuv420p",
      "-c:a",
      "aac",
      "-ar",
      "48000",
      "-ac",
      "2",
      "-b:a",
      "128k",
      "-movflags",
      "+faststart",
      "-f",
      "mp4",
      "/w/output.mp4",
    ]);
  });

  it("gaps become black and silence; clips are placed by startTime, in time order", () => {
    const c = compile({
      output: { resolution: "640x360", fps: 30 },
      timeline: {
        tracks: [
          video([
            { id: "late", src: B, in: 0, out: 1, startTime: 3 },
            { id: "early", src: A, in: 0, out: 1, startTime: 0.5 },
          ]),
        ],
      },
    });
    const g = graphOf(c);
    expect(
      g.startsWith(
        "color=c=black:s=640x360:r=30,trim=end_frame=15,format=yuv420p,setsar=1[v0];anullsrc=r=48000:cl=stereo,atrim=end_sample=24000[a1];",
      ),
    ).toBe(true);
    expect(g).toContain("color=c=black:s=640x360:r=30,trim=end_frame=45,");
    expect(g).toContain("concat=n=4:v=1:a=1");
    expect(c.args.filter((a) => a.startsWith("/w/"))).toEqual(["/w/a", "/w/b", "/w/graph.txt", "/w/output.mp4"]);
    expect(c.duration).toBe(4);
  });

  it("segments are whole frames on the output's grid, audio to the same instants: lengths never add up to drift", () => {
    expect(spanOf(0, 2.5, 25)).toEqual({ frames: 63, samples: 120960 });
    expect(spanOf(2.5, 5, 25)).toEqual({ frames: 62, samples: 119040 });
    expect(spanOf(0, 0.01, 25)).toEqual({ frames: 0, samples: 0 });
    // 29.97 fps: ten 1.001 s clips end exactly on frame 300, one 10.01 s span.
    const parts = Array.from({ length: 10 }, (_, i) => spanOf(i * 1.001, (i + 1) * 1.001, 29.97));
    expect(parts.reduce((n, p) => n + p.frames, 0)).toBe(spanOf(0, 10.01, 29.97).frames);
    expect(parts.reduce((n, p) => n + p.samples, 0)).toBe(spanOf(0, 10.01, 29.97).samples);
    const c = compile({
      output: { fps: 25 },
      timeline: {
        tracks: [video([0, 1, 2, 3].map((i) => ({ id: `c${i}`, src: A, in: 0, out: 2.5, startTime: 2.5 * i })))],
      },
    });
    const frames = [...graphOf(c).matchAll(/trim=end_frame=(\d+)/g)].map((m) => Number(m[1]));
    expect(frames).toEqual([63, 62, 63, 62]);
    // A clip shorter than half a frame has no frame of its own and is left out.
    const tiny = compile({
      output: { fps: 25 },
      timeline: {
        tracks: [
          video([
            { id: "a", src: A, in: 0, out: 1, startTime: 0 },
            { id: "t", src: B, in: 0, out: 0.01, startTime: 1 },
          ]),
        ],
      },
    });
    expect(graphOf(tiny)).toContain("concat=n=1:");
  });

  it("a timeline without a frame at its sources' rate fails, not retried, instead of asking FFmpeg to join nothing", () => {
    const { edl } = validateEdl(
      { version: "1.0", timeline: { tracks: [video([{ id: "a", src: A, in: 0, out: 0.1, startTime: 0 }])] } },
      "enterprise",
    );
    const twoFps: TimelineAssets = { ...assets, media: new Map([[A, { ...assets.media.get(A)!, fps: 2 }]]) };
    const failure = (() => {
      try {
        compileTimeline(edl!, twoFps, { workDir: "/w", output: "/w/output.mp4" });
      } catch (err) {
        return err;
      }
    })();
    expect(failure).toMatchObject({
      kind: "invalid-timeline",
      retryable: false,
      message: "The timeline is 0.1 s long, less than a frame at 2 fps: it has no frame to encode",
    });
  });

  it("speed: setpts divides time; atempo chains whole factors of 2 or 0.5 with the remainder last", () => {
    expect(atempoChain(1)).toEqual([]);
    expect(atempoChain(2)).toEqual([2]);
    expect(atempoChain(5)).toEqual([2, 2, 1.25]);
    expect(atempoChain(0.25)).toEqual([0.5, 0.5]);
    expect(atempoChain(0.1)).toEqual([0.5, 0.5, 0.5, 0.8]);
    const fast = compile({
      timeline: { tracks: [video([{ id: "f", src: A, in: 0, out: 8, startTime: 0, speed: 4 }])] },
    });
    expect(fast.duration).toBe(2);
    expect(graphOf(fast)).toContain("setpts=(PTS-STARTPTS)/4,fps=25,scale=");
    expect(graphOf(fast)).toContain("atempo=2,atempo=2,");
    const slow = compile({
      timeline: { tracks: [video([{ id: "s", src: A, in: 0, out: 1, startTime: 0, speed: 0.25 }])] },
    });
    expect(slow.duration).toBe(4);
    // Slowing down scales before fps duplicates frames.
    expect(graphOf(slow)).toMatch(/setpts=\(PTS-STARTPTS\)\/0\.25,scale=.*,fps=25,setsar/);
    expect(graphOf(slow)).toContain("atempo=0.5,atempo=0.5,");
  });

  it("mute, volume, replaceAudio, and a source without audio", () => {
    const c = compile({
      timeline: {
        tracks: [
          video([
            { id: "m", src: A, in: 0, out: 1, startTime: 0, mute: true },
            { id: "v", src: A, in: 0, out: 1, startTime: 1, volume: 6 },
            { id: "r", src: SILENT, in: 0, out: 1, startTime: 2, replaceAudio: TONE, volume: -3 },
            { id: "n", src: SILENT, in: 0, out: 1, startTime: 3 },
          ]),
        ],
      },
    });
    const g = graphOf(c);
    expect(g).toContain("anullsrc=r=48000:cl=stereo,atrim=end_sample=48000[a1]");
    expect(g).toContain("volume=6dB,apad,atrim=end_sample=48000");
    expect(c.args.join(" ")).toContain(`-protocol_whitelist file -max_pixels ${MAX_PICTURE_PIXELS} -t 1 -i /w/t`);
    expect(g).toMatch(
      /\[3:a:0\]asetpts=PTS-STARTPTS,aresample=48000,aformat=sample_fmts=fltp:channel_layouts=stereo,volume=-3dB,apad/,
    );
    expect(g.match(/anullsrc/g)).toHaveLength(2);
  });

  it("a normal overlay: scaled, opacity and fades on alpha, shown only in its window", () => {
    const c = compile({
      output: { resolution: "1280x720" },
      timeline: {
        tracks: [
          video([{ id: "a", src: A, in: 0, out: 10, startTime: 0 }]),
          {
            type: "overlay",
            clips: [
              {
                id: "logo",
                src: LOGO,
                startTime: 2,
                duration: 4,
                position: { x: "right", y: "top" },
                size: { width: "10%" },
                opacity: 0.8,
                fadeIn: 1,
                fadeOut: 0.5,
              },
            ],
          },
        ],
      },
    });
    const g = graphOf(c);
    expect(c.args.join(" ")).toContain(
      `-protocol_whitelist file -max_pixels ${MAX_PICTURE_PIXELS} -loop 1 -framerate 25 -t 10 -i /w/logo`,
    );
    expect(g).toContain(
      "[1:v:0]scale=128:64,format=rgba,colorchannelmixer=aa=0.8,fade=t=in:st=2:d=1:alpha=1,fade=t=out:st=5.5:d=0.5:alpha=1[ov4]",
    );
    expect(g).toContain("[v2][ov4]overlay=x=1152:y=0:enable='between(t,2,6)':eof_action=pass[v5]");
  });

  it("a multiply overlay is composited on white and blended in gbrp over the region under it only", () => {
    const c = compile({
      output: { resolution: "1280x720" },
      timeline: {
        tracks: [
          video([{ id: "a", src: A, in: 0, out: 5, startTime: 0 }]),
          {
            type: "overlay",
            clips: [
              { id: "m", src: LOGO, startTime: 1, duration: 2, position: { x: 100, y: 50 }, blendMode: "multiply" },
            ],
          },
        ],
      },
    });
    const g = graphOf(c);
    expect(g).toContain("color=c=white:s=200x100:r=25:d=5,format=rgba[bg5]");
    expect(g).toContain("[bg5][img4]overlay=format=auto,crop=200:100:0:0,format=gbrp[layer6]");
    expect(g).toContain("[v2]split=2[keep7][cut8]");
    expect(g).toContain("[cut8]crop=200:100:100:50,format=gbrp[under9]");
    expect(g).toContain("[under9][layer6]blend=all_mode=multiply,format=yuv420p[blend10]");
    expect(g).toContain("[keep7][blend10]overlay=x=100:y=50:enable='between(t,1,3)'[v11]");
  });

  it("text: drawtext from a text file, box, outline, shadow and fades through alpha", () => {
    const c = compile({
      timeline: {
        tracks: [
          video([{ id: "a", src: A, in: 0, out: 5, startTime: 0 }]),
          {
            type: "text",
            clips: [
              {
                id: "t",
                text: "Hello: 'world', 100%",
                startTime: 1,
                duration: 3,
                fontSize: 40,
                fontColor: "#FF0000",
                fontWeight: "bold",
                textAlign: "left",
                position: { x: 10, y: "bottom" },
                background: { color: "#000000", opacity: 0.5, padding: 8 },
                outline: { color: "#FFFFFF", width: 2 },
                shadow: { color: "#000000", offsetX: 3, offsetY: 4 },
                fadeIn: 0.5,
                fadeOut: 1,
              },
            ],
          },
        ],
      },
    });
    expect(c.files).toEqual([
      { path: "/w/text-1-0-0.txt", content: "Hello: 'world', 100%" },
      { path: "/w/graph.txt", content: c.graph },
    ]);
    expect(graphOf(c)).toContain(
      "[v2]drawtext=expansion=none:fontfile='/fonts/Sans-Bold.ttf':textfile='/w/text-1-0-0.txt':fontsize=40:fontcolor=0xFF0000@1:x=10:y=h-text_h-8+0:box=1:boxcolor=0x000000@0.5:boxborderw=8:borderw=2:bordercolor=0xFFFFFF@1:shadowx=3:shadowy=4:shadowcolor=0x000000@1:alpha='if(lt(t,1.5),(t-1)/0.5,if(gt(t,3),(4-t)/1,1))':enable='between(t,1,4)'[v4]",
    );
  });

  it("webm output: VP9 with Opus, constant quality", () => {
    const c = compile({
      output: { container: "webm", crf: 33 },
      timeline: { tracks: [video([{ id: "a", src: A, in: 0, out: 1, startTime: 0 }])] },
    });
    const tail = c.args.slice(c.args.indexOf("-c:v"));
    expect(tail).toEqual(
      expect.arrayContaining([
        "libvpx-vp9",
        "-deadline",
        "good",
        "-cpu-used",
        "5",
        "-row-mt",
        "1",
        "-crf",
        "33",
        "-b:v",
        "0",
        "libopus",
        "webm",
      ]),
    );
    expect(tail).not.toContain("+faststart");
  });

  it("layout: sizes in pixels, percent, or by aspect; keyword placement", () => {
    const frame = { width: 1000, height: 500 };
    const natural = { width: 200, height: 100 };
    const clip = (size: unknown) => ({ size }) as never;
    expect(overlaySize(clip(undefined), frame, natural)).toEqual({ width: 200, height: 100 });
    expect(overlaySize(clip({ width: { unit: "px", value: 50 } }), frame, natural)).toEqual({ width: 50, height: 25 });
    expect(overlaySize(clip({ height: { unit: "percent", value: 50 } }), frame, natural)).toEqual({
      width: 500,
      height: 250,
    });
    expect(placeBox({ x: "center", y: "bottom" }, { width: 100, height: 50 }, frame)).toEqual({ x: 450, y: 450 });
    expect(placeBox({ x: -20, y: 30 }, { width: 100, height: 50 }, frame)).toEqual({ x: -20, y: 30 });
  });
});
