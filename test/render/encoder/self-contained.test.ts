import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseProbe, probeFile } from "../../../encoder/ffmpeg/probe";
import { JobFailure } from "../../../encoder/failure";
import { assertSelfContained, id3v2TagLength } from "../../../encoder/source/self-contained";
import { id3v2Tag } from "../../support/hostile-media";
import { ffmpeg, ffprobeJson, makeSource } from "../../support/media";

let dir: string;
let clip: string;

/** A DASH manifest whose one representation is a local file FFmpeg would open. */
const mpd = (target: string, tag = "MPD") =>
  `<${tag} xmlns="urn:mpeg:dash:schema:mpd:2011" type="static" mediaPresentationDuration="PT1S" minBufferTime="PT1S" profiles="urn:mpeg:dash:profile:isoff-on-demand:2011">` +
  `<Period><AdaptationSet mimeType="video/mp4"><Representation id="1" bandwidth="1000" width="160" height="120" codecs="avc1.42c00d">` +
  `<BaseURL>${target}</BaseURL></Representation></AdaptationSet></Period></${tag}>\n`;

async function file(name: string, content: string): Promise<string> {
  const path = join(dir, name);
  await writeFile(path, content);
  return path;
}

/** The failure as the job would show it: refused for good, and no server path in the message. */
function expectRefusal(err: unknown) {
  expect(err).toMatchObject({
    kind: "source-refused",
    retryable: false,
    message: expect.stringMatching(/playlist or manifest/),
  });
  expect((err as Error).message).not.toContain("/");
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "self-contained-"));
  clip = join(dir, "clip.mp4");
  await makeSource(clip, { seconds: 1, width: 160, height: 120, audio: false });
});
afterAll(() => rm(dir, { recursive: true, force: true }));

describe("the sniff reads the head as FFmpeg's probes do: anywhere, in any case", () => {
  it.each([
    ["a comment before <MPD", `<!-- x -->${mpd(clip)}`],
    ["a lower-case <mpd", mpd(clip, "mpd")],
    ["padding before <MPD", `${" ".repeat(3000)}\n${mpd(clip)}`],
    [
      "padding past the first 4 KiB (FFmpeg's probe reads up to 1 MiB)",
      `<!-- ${"x".repeat(500_000)} -->\n${mpd(clip)}`,
    ],
    ["an SDP line after a NUL inside a line", "v=0\nx\u0000y\nc=IN IP4 127.0.0.1\nm=video 5004 RTP/AVP 96\n"],
    ["an XML declaration", `<?xml version="1.0"?>\n${mpd(clip)}`],
    ["a lower-case HLS tag", `#extm3u\n#EXTINF:1,\n${clip}\n`],
    ["a concat list", `ffconcat version 1.0\nfile clip.mp4\n`],
    [
      "an IMF composition playlist",
      `<?xml version="1.0"?><CompositionPlaylist><ContentTitle>x</ContentTitle></CompositionPlaylist>`,
    ],
    ["an SDP session", "v=0\no=- 0 0 IN IP4 127.0.0.1\ns=x\nc=IN IP4 127.0.0.1\nm=video 5004 RTP/AVP 96\n"],
  ])("%s is refused", async (name, content) => {
    expectRefusal(await assertSelfContained(await file(`sniff-${name.replace(/\W+/g, "-")}`, content)).catch((e) => e));
  });

  it("a media file passes", async () => {
    await expect(assertSelfContained(clip)).resolves.toBeUndefined();
  });

  it("markers after a NUL byte pass, as FFmpeg's probes (which read a C string) never see them", async () => {
    await expect(
      assertSelfContained(
        await file("binary", `\u0000\u0000\u0000 ftypisom ${mpd(clip)} #EXTM3U ffconcat version 1.0`),
      ),
    ).resolves.toBeUndefined();
  });
});

describe("the sniff looks where FFmpeg's probe looks: behind a leading ID3v2 tag", () => {
  const playlists = [
    ["an HLS playlist", "hls", "#EXTM3U\n#EXT-X-TARGETDURATION:1\n#EXTINF:1,\nclip.mp4\n#EXT-X-ENDLIST\n"],
    ["a concat list", "concat", "ffconcat version 1.0\nfile clip.mp4\n"],
  ] as const;

  it.each(playlists)(
    "%s behind an ID3v2 tag is read by ffprobe as %s, and refused before it",
    async (name, format, content) => {
      const path = join(dir, `id3-${format}`);
      await writeFile(path, Buffer.concat([id3v2Tag(), Buffer.from(content)]));
      // The threat is real: FFmpeg skips the tag, sees the playlist, and opens the clip it names.
      const probed = (await ffprobeJson(path, ["-protocol_whitelist", "file"])).format as { format_name?: string };
      expect(probed.format_name, name).toBe(format);
      expectRefusal(await assertSelfContained(path).catch((e) => e));
    },
  );

  it.each(playlists)(
    "%s behind a chain of ID3v2 tags, one of them large, is refused",
    async (_name, format, content) => {
      const path = join(dir, `id3-chain-${format}`);
      await writeFile(path, Buffer.concat([id3v2Tag(300_000), id3v2Tag(), Buffer.from(content)]));
      expectRefusal(await assertSelfContained(path).catch((e) => e));
    },
  );

  it("an MP3 with its ID3v2 tag passes, and probes as MP3", async () => {
    const mp3 = join(dir, "tagged.mp3");
    await ffmpeg(["-f", "lavfi", "-i", "sine=duration=1", "-metadata", "title=a title", "-id3v2_version", "4", mp3]);
    expect(id3v2TagLength(await readFile(mp3))).toBeGreaterThan(10);
    await expect(assertSelfContained(mp3)).resolves.toBeUndefined();
    expect((await probeFile(mp3)).audio).toHaveLength(1);
  });

  it("the tag's length is read as FFmpeg reads it: syncsafe size, footer flag, and no tag at all", () => {
    const tag = id3v2Tag(200);
    expect(id3v2TagLength(tag)).toBe(tag.length);
    const withFooter = Buffer.from(tag);
    withFooter[5] = 0x10;
    expect(id3v2TagLength(withFooter)).toBe(tag.length + 10);
    const notSyncsafe = Buffer.from(tag);
    notSyncsafe[6] = 0x80;
    expect(id3v2TagLength(notSyncsafe)).toBe(0);
    expect(id3v2TagLength(Buffer.from("#EXTM3U\n"))).toBe(0);
  });
});

describe("after ffprobe, a source read as a referencing format is refused", () => {
  it("a DASH manifest padded past the 1 MiB FFmpeg's format probe reads is not read as one: ffprobe never opens the clip it names", async () => {
    const padded = await file("far-padded.mpd", `<!-- ${"x".repeat(1 << 20)} -->\n${mpd(clip)}`);
    await expect(assertSelfContained(padded)).resolves.toBeUndefined();
    // Read as DASH, it would have opened the clip and probed fine (as format "dash", refused).
    const err = await probeFile(padded, { workDir: dir }).catch((e) => e);
    expect(err).toBeInstanceOf(JobFailure);
    expect(err.kind).toBe("ffmpeg");
    expect(err.message).toMatch(/Invalid data found when processing input/);
  });

  it("HLS and concat, probed, are refused", async () => {
    for (const content of [
      "#EXTM3U\n#EXT-X-TARGETDURATION:1\n#EXTINF:1,\nclip.mp4\n#EXT-X-ENDLIST\n",
      "ffconcat version 1.0\nfile clip.mp4\n",
    ]) {
      expectRefusal(await probeFile(await file("list", content), { workDir: dir }).catch((e) => e));
    }
  });

  it("the format names of FFmpeg's referencing demuxers are refused; aliases lists are split", () => {
    const raw = (format_name: string) => ({
      format: { format_name, duration: "1" },
      streams: [{ index: 0, codec_type: "video", codec_name: "h264", width: 16, height: 16 }],
    });
    for (const name of ["hls", "dash", "concat", "imf", "sdp", "vobsub"])
      expectRefusal(catching(() => parseProbe(raw(name))));
    expect(parseProbe(raw("mov,mp4,m4a,3gp,3g2,mj2")).duration).toBe(1);
  });

  it("a media file probes as before", async () => {
    expect((await probeFile(clip)).video?.width).toBe(160);
  });
});

function catching(fn: () => unknown): unknown {
  try {
    fn();
  } catch (err) {
    return err;
  }
  return undefined;
}
