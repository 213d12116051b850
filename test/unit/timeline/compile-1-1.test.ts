import { describe, expect, it } from "vitest";
import { validateEdl } from "../../../domain/edl/validate";
import { MAX_TEXT_LINES } from "../../../domain/edl/limits";
import { JobFailure } from "../../../encoder/failure";
import { compileTimeline, fontKey, type TimelineAssets } from "../../../encoder/timeline/compile";

const A = "https://media.example.com/a.mp4";
const LOGO = "https://media.example.com/logo.png";
const SUBS = "https://media.example.com/subs.vtt";

const assets: TimelineAssets = {
  media: new Map([[A, { path: "/w/a", hasVideo: true, hasAudio: true, width: 1280, height: 720, fps: 25 }]]),
  images: new Map([[LOGO, { path: "/w/logo", width: 200, height: 100 }]]),
  fonts: new Map([[fontKey({ fontFamily: "Arial", fontWeight: "normal" }), "/fonts/Sans.ttf"]]),
  captions: new Map([[SUBS, [{ start: 1, end: 2.5, text: "from\nthe file" }]]]),
};

function compile(tracks: unknown[]) {
  const result = validateEdl(
    { version: "1.1", output: { resolution: "640x360", fps: 25 }, timeline: { tracks } },
    "enterprise",
  );
  expect(result.errors).toEqual([]);
  return compileTimeline(result.edl!, assets, { workDir: "/w", output: "/w/output.mp4" });
}

describe("timeline compiler, version 1.1: each property as its filters, on a validated document", () => {
  const c = compile([
    {
      type: "video",
      clips: [
        {
          id: "a",
          src: A,
          in: 0,
          out: 4,
          startTime: 0,
          crop: { top: 0.1 },
          transform: { rotate: 90, flip: "horizontal" },
          filters: ["greyscale", { type: "blur", strength: 0.5 }],
          transition: { out: { type: "wipeLeft", duration: 1 } },
        },
        {
          id: "b",
          src: A,
          in: 0,
          out: 4,
          startTime: 3,
          freeze: { at: 1, duration: 2 },
          transition: { out: { type: "fade", duration: 0.5 } },
        },
      ],
    },
    {
      type: "overlay",
      clips: [
        {
          id: "o",
          src: LOGO,
          startTime: 0,
          duration: 2,
          crop: { left: 0.2 },
          transition: { in: { type: "slideLeft", duration: 0.5 } },
        },
      ],
    },
    {
      type: "caption",
      clips: [
        { id: "inline", cues: [{ start: 0, end: 1, text: "hi" }] },
        { id: "file", src: SUBS },
      ],
    },
  ]);

  it("the timeline is the clips less their overlap, plus the freeze: 4 + 4 − 1 + 2 = 9 s", () => {
    expect(c.duration).toBe(9);
  });

  it("crop, filters, flip and turn act on the source picture, in that order, before the fit", () => {
    expect(c.graph).toContain(
      "[0:v:0]setpts=(PTS-STARTPTS)/1,crop=w=iw*1:h=ih*0.9:x=iw*0:y=ih*0.1:exact=1,hue=s=0,gblur=sigma=3.24,hflip,transpose=clock,fps=25,scale=640:360:",
    );
  });

  it("the overlapping pair is one xfade, its offset half a frame before the overlap, and one acrossfade", () => {
    // a is 100 frames, the overlap 25: the transition starts at frame 75 (3 s).
    expect(c.graph).toContain("xfade=transition=wipeleft:duration=1:offset=2.98");
    expect(c.graph).toContain("acrossfade=ns=48000:c1=tri:c2=tri");
    expect(c.graph.match(/settb=AVTB/g)).toHaveLength(2);
  });

  it("the freeze holds b's frame 25 for 50 more frames; its sound has 2 s of silence put in at 1 s", () => {
    expect(c.graph).toContain("loop=loop=50:size=1:start=26,setpts=N/FRAME_RATE/TB");
    expect(c.graph).toMatch(/atrim=end_sample=48000,asetpts=PTS-STARTPTS\[a\d+\]/);
    expect(c.graph).toMatch(/atrim=start_sample=48000,asetpts=PTS-STARTPTS\[a\d+\]/);
    expect(c.graph).toContain("anullsrc=r=48000:cl=stereo,atrim=end_sample=96000");
    // b's source is read for its in/out span only.
    expect(c.args.join(" ")).toContain("-ss 0 -t 4 -i /w/a");
  });

  it("b fades out through black and silence over its last half second (of its 150 frames, the last 13: 137..149)", () => {
    expect(c.graph).toContain("fade=t=out:s=137:n=13");
    expect(c.graph).toContain("afade=t=out:ss=264000:ns=24000");
  });

  it("the overlay is cropped (160x100 of 200x100, centred: x 240) and slides in from a frame's width to the right", () => {
    expect(c.graph).toMatch(/\[2:v:0\]crop=w=iw\*0\.8:h=ih\*1:x=iw\*0\.2:y=ih\*0:exact=1\[ov\d+\]/);
    expect(c.graph).toContain("overlay=x='240+W*(1-clip((t-0)/0.5,0,1))':y=130:");
  });

  it("each cue is a drawtext per line, enabled over its interval; a file's cues come from the assets", () => {
    expect(c.graph).toMatch(/textfile='\/w\/caption-2-0-0-0\.txt'[^;]*enable='between\(t,0,1\)'/);
    expect(c.files).toContainEqual({ path: "/w/caption-2-1-0-0.txt", content: "from" });
    expect(c.files).toContainEqual({ path: "/w/caption-2-1-0-1.txt", content: "the file" });
    expect(c.graph).toMatch(/textfile='\/w\/caption-2-1-0-1\.txt'[^;]*enable='between\(t,1,2\.5\)'/);
  });
});

describe("timeline compiler, version 1.1: a caption file's cues", () => {
  const withFile = (cues: { start: number; end: number; text: string }[], startTime = 0) => {
    const result = validateEdl(
      {
        version: "1.1",
        timeline: {
          tracks: [
            { type: "video", clips: [{ id: "v", src: A, in: 0, out: 4, startTime: 0 }] },
            { type: "caption", clips: [{ id: "subs", src: SUBS, startTime }] },
          ],
        },
      },
      "enterprise",
    );
    expect(result.errors).toEqual([]);
    return () =>
      compileTimeline(
        result.edl!,
        { ...assets, captions: new Map([[SUBS, cues]]) },
        { workDir: "/w", output: "/w/output.mp4" },
      );
  };

  it("those starting at or after the timeline's end (4 s) are not drawn, and do not lengthen it", () => {
    const c = withFile([
      { start: 3, end: 5, text: "drawn, to the end" },
      { start: 4, end: 6, text: "after the end" },
      { start: 3600, end: 3601, text: "an hour in" },
    ])();
    expect(c.duration).toBe(4);
    expect(c.files.filter((f) => f.path.includes("caption"))).toEqual([
      { path: "/w/caption-1-0-0-0.txt", content: "drawn, to the end" },
    ]);
  });

  it("a caption file's clip starting after the video lengthens nothing, as the validator counts it", () => {
    const c = withFile([{ start: 0, end: 1, text: "never drawn" }], 10)();
    expect(c.duration).toBe(4);
    expect(c.files.filter((f) => f.path.includes("caption"))).toEqual([]);
  });

  it("more lines than a timeline may draw fail the job, not retried: each is a drawtext", () => {
    const many = Array.from({ length: MAX_TEXT_LINES + 1 }, (_, k) => ({
      start: k * 0.001,
      end: k * 0.001 + 1,
      text: "a line",
    }));
    const failure = JobFailure.of(
      (() => {
        try {
          withFile(many)();
        } catch (err) {
          return err;
        }
        return expect.unreachable("the compile should fail");
      })(),
    );
    expect(failure).toMatchObject({ kind: "invalid-timeline", retryable: false });
    expect(failure.message).toBe(
      `Too many lines of text: ${MAX_TEXT_LINES + 1} across the text clips and captions, caption files included (maximum ${MAX_TEXT_LINES})`,
    );
    expect(withFile(many.slice(1))().files).toHaveLength(MAX_TEXT_LINES + 1);
  });
});
