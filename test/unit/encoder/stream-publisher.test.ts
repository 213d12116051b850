import { existsSync } from "node:fs";
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { firstSampleTimes } from "../../../encoder/stream/fmp4-time";
import {
  listedSegments,
  type PublishedSegment,
  type Publisher,
  type PublisherOptions,
  publishStream,
} from "../../../encoder/stream/publisher";
import { avc1Entry, concat, initSegment, mdat, moof, mp4aEntry, styp, traf, trun } from "../../support/mp4-boxes";

describe("listedSegments: the segments FFmpeg's media playlist lists", () => {
  it("each URI with the EXTINF before it, in order; tags, blank lines and CRLF aside", () => {
    const playlist = [
      "#EXTM3U",
      "#EXT-X-VERSION:7",
      "#EXT-X-TARGETDURATION:6",
      "#EXT-X-PLAYLIST-TYPE:EVENT",
      '#EXT-X-MAP:URI="init_0.mp4"',
      "#EXTINF:2.002000,",
      "seg_00000.m4s",
      "",
      "#EXTINF:6.006000,",
      "#EXT-X-PROGRAM-DATE-TIME:2026-01-02T03:04:05.000Z",
      "seg_00001.m4s  ",
      "#EXTINF:4,",
      "seg_00002.m4s",
      "#EXT-X-ENDLIST",
    ].join("\r\n");
    expect(listedSegments(playlist)).toEqual([
      { file: "seg_00000.m4s", duration: 2.002 },
      { file: "seg_00001.m4s", duration: 6.006 },
      { file: "seg_00002.m4s", duration: 4 },
    ]);
  });

  it("a URI without its EXTINF is not a segment; an empty or half-written playlist lists what it has", () => {
    expect(listedSegments("")).toEqual([]);
    expect(listedSegments("#EXTM3U\nstray.ts\n#EXTINF:2.000000,\nseg_00000.ts\n#EXTINF:6.0")).toEqual([
      { file: "seg_00000.ts", duration: 2 },
    ]);
  });
});

/** An FFmpeg media playlist listing these segments. */
const playlist = (segments: readonly [file: string, duration: number][]) =>
  [
    "#EXTM3U",
    "#EXT-X-VERSION:6",
    "#EXT-X-PLAYLIST-TYPE:EVENT",
    ...segments.flatMap(([file, duration]) => [`#EXTINF:${duration.toFixed(6)},`, file]),
    "",
  ].join("\n");

/** Bytes an MPEG-TS segment's scan finds: an H.264 SPS (High, level 3.1) or an AAC-LC ADTS header. */
const TS_VIDEO = Uint8Array.of(0x47, 0x40, 0x11, 0x10, 0, 0, 0, 1, 0x67, 0x64, 0x00, 0x1f, 0xac, 0xd9);
const TS_AUDIO = Uint8Array.of(0x47, 0x41, 0x01, 0x10, 0xff, 0xf1, 0x50, 0x80, 0x2e, 0x7f, 0xfc);

/** A video fMP4 segment at `decode` (90 kHz), its first sample shown 2 frames later (B-frames). */
const videoSegment = (decode: number) =>
  concat([styp(), moof(1, traf(decode, { trun: trun([{ duration: 3000, size: 16, composition: 6000 }]) })), mdat()]);
/** An audio fMP4 segment at `decode` (48 kHz). */
const audioSegment = (decode: number) =>
  concat([styp(), moof(1, traf(decode, { trun: trun([{ duration: 1024, size: 16 }]) })), mdat()]);

interface Run {
  publisher: Publisher;
  events: string[];
  stored: Map<string, { bytes: Buffer; contentType: string }>;
  reports: PublishedSegment[][];
  errors: unknown[];
}

let dir: string;
const running: Publisher[] = [];

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "stream-publisher-"));
});
afterEach(async () => {
  for (const publisher of running.splice(0)) publisher.stop();
  await rm(dir, { recursive: true, force: true });
});

const TS_RENDITIONS = [
  { name: "720p", kind: "video" as const },
  { name: "360p", kind: "video" as const },
  { name: "audio", kind: "audio" as const },
];
const FMP4_RENDITIONS = [
  { name: "720p", kind: "video" as const },
  { name: "audio", kind: "audio" as const },
];

/**
 * A publisher over `dir` that only the test's flushes drive (its own scans an hour apart), whose
 * store reads each file as it is stored and whose report records each batch; every call logged in order.
 */
function start(options: Partial<PublisherOptions> & Pick<PublisherOptions, "renditions" | "segmentType">): Run {
  const events: string[] = [];
  const stored = new Map<string, { bytes: Buffer; contentType: string }>();
  const reports: PublishedSegment[][] = [];
  const errors: unknown[] = [];
  const publisher = publishStream(
    {
      dir,
      keyPrefix: "outputs/acct/job/stream/",
      startNumber: 0,
      intervalMs: 3_600_000,
      store: async (key, path, contentType) => {
        events.push(`store ${key.slice("outputs/acct/job/stream/".length)}`);
        stored.set(key, { bytes: await readFile(path), contentType });
      },
      report: async (segments) => {
        events.push(`report ${segments.map((s) => `${s.rendition}/${s.index}`).join(" ")}`);
        reports.push(segments);
      },
      ...options,
    },
    (err) => errors.push(err),
  );
  running.push(publisher);
  return { publisher, events, stored, reports, errors };
}

async function write(rendition: string, file: string, bytes: Uint8Array | string) {
  await mkdir(join(dir, rendition), { recursive: true });
  await writeFile(join(dir, rendition, file), bytes);
}

describe("publishStream: MPEG-TS", () => {
  it("stores what each playlist lists, rendition by rendition, then reports the batch; segment 0 carries its codecs", async () => {
    for (const r of TS_RENDITIONS) {
      const bytes = r.kind === "audio" ? TS_AUDIO : TS_VIDEO;
      await write(r.name, "seg_00000.ts", bytes);
      await write(r.name, "seg_00001.ts", bytes);
      await write(
        r.name,
        "index.m3u8",
        playlist([
          ["seg_00000.ts", 2],
          ["seg_00001.ts", 6.006],
        ]),
      );
    }
    const run = start({ renditions: TS_RENDITIONS, segmentType: "mpegts" });
    await run.publisher.flush();
    expect(run.events).toEqual([
      "store 720p/seg_00000.ts",
      "store 720p/seg_00001.ts",
      "store 360p/seg_00000.ts",
      "store 360p/seg_00001.ts",
      "store audio/seg_00000.ts",
      "store audio/seg_00001.ts",
      "report 720p/0 720p/1 360p/0 360p/1 audio/0 audio/1",
    ]);
    expect(run.reports[0]).toEqual([
      { rendition: "720p", index: 0, duration: 2, codecs: "avc1.64001f" },
      { rendition: "720p", index: 1, duration: 6.006 },
      { rendition: "360p", index: 0, duration: 2, codecs: "avc1.64001f" },
      { rendition: "360p", index: 1, duration: 6.006 },
      { rendition: "audio", index: 0, duration: 2, codecs: "mp4a.40.2" },
      { rendition: "audio", index: 1, duration: 6.006 },
    ]);
    const stored = run.stored.get("outputs/acct/job/stream/audio/seg_00001.ts");
    expect(stored?.contentType).toBe("video/mp2t");
    expect(stored?.bytes).toEqual(Buffer.from(TS_AUDIO));
    expect(run.publisher.stored()).toEqual(
      run.events.filter((e) => e.startsWith("store ")).map((e) => `outputs/acct/job/stream/${e.slice(6)}`),
    );
    expect(run.errors).toEqual([]);
  });

  it("each flush takes only what is new; a flush with nothing new reports nothing; segments() holds them all in order", async () => {
    await write("720p", "seg_00000.ts", TS_VIDEO);
    await write("720p", "index.m3u8", playlist([["seg_00000.ts", 2]]));
    const run = start({ renditions: [TS_RENDITIONS[0]], segmentType: "mpegts" });
    await run.publisher.flush();
    await run.publisher.flush();
    await write("720p", "seg_00001.ts", TS_VIDEO);
    await write("720p", "seg_00002.ts", TS_VIDEO);
    await write(
      "720p",
      "index.m3u8",
      playlist([
        ["seg_00000.ts", 2],
        ["seg_00001.ts", 6],
        ["seg_00002.ts", 3.5],
      ]),
    );
    await run.publisher.flush();
    expect(run.events).toEqual([
      "store 720p/seg_00000.ts",
      "report 720p/0",
      "store 720p/seg_00001.ts",
      "store 720p/seg_00002.ts",
      "report 720p/1 720p/2",
    ]);
    expect(run.publisher.segments()).toEqual(
      new Map([
        [
          "720p",
          [
            { rendition: "720p", index: 0, duration: 2, codecs: "avc1.64001f" },
            { rendition: "720p", index: 1, duration: 6 },
            { rendition: "720p", index: 2, duration: 3.5 },
          ],
        ],
      ]),
    );
  });

  it("a rendition with no playlist yet, and a listed name that is not a segment, are passed over", async () => {
    await write("720p", "other.ts", TS_VIDEO);
    await write("720p", "seg_00000.ts", TS_VIDEO);
    await write(
      "720p",
      "index.m3u8",
      playlist([
        ["other.ts", 1],
        ["seg_00000.ts", 2],
      ]),
    );
    const run = start({ renditions: TS_RENDITIONS, segmentType: "mpegts" });
    await run.publisher.flush();
    expect(run.events).toEqual(["store 720p/seg_00000.ts", "report 720p/0"]);
  });

  it("segments a former attempt listed are reported as they were but not stored again", async () => {
    for (const r of TS_RENDITIONS.slice(0, 2)) {
      for (const i of [0, 1, 2]) await write(r.name, `seg_0000${i}.ts`, TS_VIDEO);
      await write(
        r.name,
        "index.m3u8",
        playlist([
          ["seg_00000.ts", 2],
          ["seg_00001.ts", 6],
          ["seg_00002.ts", 6],
        ]),
      );
    }
    const run = start({ renditions: TS_RENDITIONS.slice(0, 2), segmentType: "mpegts", listed: { "720p": 2 } });
    await run.publisher.flush();
    expect(run.events).toEqual([
      "store 720p/seg_00002.ts",
      "store 360p/seg_00000.ts",
      "store 360p/seg_00001.ts",
      "store 360p/seg_00002.ts",
      "report 720p/0 720p/1 720p/2 360p/0 360p/1 360p/2",
    ]);
  });

  it("dropStored deletes each segment's file once it is stored (or found listed before)", async () => {
    for (const i of [0, 1]) await write("720p", `seg_0000${i}.ts`, TS_VIDEO);
    await write(
      "720p",
      "index.m3u8",
      playlist([
        ["seg_00000.ts", 2],
        ["seg_00001.ts", 6],
      ]),
    );
    const run = start({
      renditions: [TS_RENDITIONS[0]],
      segmentType: "mpegts",
      dropStored: true,
      listed: { "720p": 1 },
    });
    await run.publisher.flush();
    expect(run.events).toEqual(["store 720p/seg_00001.ts", "report 720p/0 720p/1"]);
    expect(existsSync(join(dir, "720p", "seg_00000.ts"))).toBe(false);
    expect(existsSync(join(dir, "720p", "seg_00001.ts"))).toBe(false);
    expect(existsSync(join(dir, "720p", "index.m3u8"))).toBe(true);
  });

  it("reports at most 200 segments at a time, in order", async () => {
    const names = Array.from({ length: 450 }, (_, i) => `seg_${String(i).padStart(5, "0")}.ts`);
    for (const name of names) await write("720p", name, TS_VIDEO);
    await write("720p", "index.m3u8", playlist(names.map((name) => [name, 2])));
    const run = start({ renditions: [TS_RENDITIONS[0]], segmentType: "mpegts" });
    await run.publisher.flush();
    expect(run.reports.map((batch) => batch.length)).toEqual([200, 200, 50]);
    expect(run.reports.flat().map((s) => s.index)).toEqual(names.map((_, i) => i));
    expect(run.events.findIndex((e) => e.startsWith("report"))).toBe(450);
  });

  it("scans on its own between flushes", async () => {
    await write("720p", "seg_00000.ts", TS_VIDEO);
    await write("720p", "index.m3u8", playlist([["seg_00000.ts", 2]]));
    const run = start({ renditions: [TS_RENDITIONS[0]], segmentType: "mpegts", intervalMs: 10 });
    await vi.waitFor(() => expect(run.events).toEqual(["store 720p/seg_00000.ts", "report 720p/0"]));
  });
});

describe("publishStream: fMP4", () => {
  const VIDEO_INIT = initSegment(90_000, { entry: avc1Entry(0x64, 0x00, 0x28) });
  const AUDIO_INIT = initSegment(48_000, { mdhdVersion: 1, entry: mp4aEntry(2) });
  /** The audio's first sample is meant 1024 samples before the video's first frame, at 10 s. */
  const MEANT = { "720p": 10, audio: 10 - 1024 / 48_000 };

  async function writeRun(first: number, count: number) {
    // FFmpeg names each rendition's init segment after its stream.
    await write("720p", "init_0.mp4", VIDEO_INIT);
    await write("audio", "init.mp4", AUDIO_INIT);
    const indices = Array.from({ length: count }, (_, i) => first + i);
    const name = (i: number) => `seg_${String(i).padStart(5, "0")}.m4s`;
    // FFmpeg starts each run's decode times at 0.
    for (const [n, i] of indices.entries()) {
      await write("720p", name(i), videoSegment(n * 180_000));
      await write("audio", name(i), audioSegment(n * 96_000));
    }
    for (const r of FMP4_RENDITIONS) await write(r.name, "index.m3u8", playlist(indices.map((i) => [name(i), 2])));
  }

  const decodeOf = (run: Run, key: string) => {
    const stored = run.stored.get(`outputs/acct/job/stream/${key}`);
    if (!stored) throw new Error(`${key} was not stored`);
    return firstSampleTimes(stored.bytes)?.decode;
  };

  it("a run from 0: each rendition's init first, every segment moved onto the stream's clock before it is stored", async () => {
    await writeRun(0, 2);
    const run = start({ renditions: FMP4_RENDITIONS, segmentType: "fmp4", firstPresentation: MEANT });
    await run.publisher.flush();
    expect(run.events).toEqual([
      "store 720p/init.mp4",
      "store 720p/seg_00000.m4s",
      "store 720p/seg_00001.m4s",
      "store audio/init.mp4",
      "store audio/seg_00000.m4s",
      "store audio/seg_00001.m4s",
      "report 720p/0 720p/1 audio/0 audio/1",
    ]);
    expect(run.stored.get("outputs/acct/job/stream/720p/init.mp4")).toEqual({
      bytes: Buffer.from(VIDEO_INIT),
      contentType: "video/mp4",
    });
    expect(run.stored.get("outputs/acct/job/stream/audio/init.mp4")?.contentType).toBe("audio/mp4");
    expect(run.stored.get("outputs/acct/job/stream/audio/seg_00000.m4s")?.contentType).toBe("audio/mp4");
    // The video's first frame, shown 6000 ticks after its decode, lands at 10 s: 900000 less 6000.
    expect(decodeOf(run, "720p/seg_00000.m4s")).toBe(894_000);
    expect(decodeOf(run, "720p/seg_00001.m4s")).toBe(1_074_000);
    expect(decodeOf(run, "audio/seg_00000.m4s")).toBe(480_000 - 1024);
    expect(decodeOf(run, "audio/seg_00001.m4s")).toBe(576_000 - 1024);
    expect(run.reports[0]).toEqual([
      { rendition: "720p", index: 0, duration: 2, codecs: "avc1.640028", start: 10 },
      { rendition: "720p", index: 1, duration: 2 },
      { rendition: "audio", index: 0, duration: 2, codecs: "mp4a.40.2", start: 10 - 1024 / 48_000 },
      { rendition: "audio", index: 1, duration: 2 },
    ]);
    expect(run.publisher.inits()).toEqual(
      new Map([
        ["720p", join(dir, "720p", "init_0.mp4")],
        ["audio", join(dir, "audio", "init.mp4")],
      ]),
    );
  });

  it("a part's run: no init stored, its first segment placed where the part starts, the later ones by the same move", async () => {
    await writeRun(4, 2);
    const video = [FMP4_RENDITIONS[0]];
    const run = start({
      renditions: video,
      segmentType: "fmp4",
      startNumber: 4,
      firstPresentation: { "720p": 10 + 14 },
    });
    await run.publisher.flush();
    expect(run.events).toEqual(["store 720p/seg_00004.m4s", "store 720p/seg_00005.m4s", "report 720p/4 720p/5"]);
    expect(decodeOf(run, "720p/seg_00004.m4s")).toBe(24 * 90_000 - 6000);
    expect(decodeOf(run, "720p/seg_00005.m4s")).toBe(24 * 90_000 - 6000 + 180_000);
    expect(run.publisher.inits().get("720p")).toBe(join(dir, "720p", "init_0.mp4"));
    // Later flushes keep the move the run's first segment set.
    await write("720p", "seg_00006.m4s", videoSegment(360_000));
    await write("720p", "index.m3u8", playlist([4, 5, 6].map((i) => [`seg_0000${i}.m4s`, 2])));
    await run.publisher.flush();
    expect(decodeOf(run, "720p/seg_00006.m4s")).toBe(24 * 90_000 - 6000 + 360_000);
  });

  it("without firstPresentation the segments are stored as FFmpeg wrote them", async () => {
    await writeRun(0, 1);
    const run = start({ renditions: [FMP4_RENDITIONS[0]], segmentType: "fmp4" });
    await run.publisher.flush();
    expect(decodeOf(run, "720p/seg_00000.m4s")).toBe(0);
    expect(run.reports[0]).toEqual([
      { rendition: "720p", index: 0, duration: 2, codecs: "avc1.640028", start: 6000 / 90_000 },
    ]);
  });

  it("a first segment with no decode time to place fails the run", async () => {
    await write("720p", "init_0.mp4", VIDEO_INIT);
    await write("720p", "seg_00000.m4s", concat([styp(), mdat()]));
    await write("720p", "index.m3u8", playlist([["seg_00000.m4s", 2]]));
    const run = start({ renditions: [FMP4_RENDITIONS[0]], segmentType: "fmp4", firstPresentation: MEANT });
    await expect(run.publisher.flush()).rejects.toThrow("720p's first segment has no decode time to place");
    expect(run.events).toEqual(["store 720p/init.mp4"]);
    expect(run.errors).toHaveLength(1);
  });
});

describe("publishStream: a failure stops it", () => {
  it("a store that fails: onError told once, nothing reported, no scan after it, every flush rethrowing it", async () => {
    for (const i of [0, 1, 2]) await write("720p", `seg_0000${i}.ts`, TS_VIDEO);
    await write(
      "720p",
      "index.m3u8",
      playlist([
        ["seg_00000.ts", 2],
        ["seg_00001.ts", 6],
        ["seg_00002.ts", 6],
      ]),
    );
    const refused = new Error("storage refused seg_00001.ts");
    let stores = 0;
    const run = start({
      renditions: [TS_RENDITIONS[0]],
      segmentType: "mpegts",
      intervalMs: 10,
      store: async (key) => {
        stores += 1;
        if (key.endsWith("seg_00001.ts")) throw refused;
      },
    });
    await vi.waitFor(() => expect(run.errors).toEqual([refused]));
    await write("720p", "seg_00003.ts", TS_VIDEO);
    await write("720p", "index.m3u8", playlist([0, 1, 2, 3].map((i) => [`seg_0000${i}.ts`, 2])));
    // A flush runs after every scan before it: once it has failed, the timer's scans have all been let go.
    await expect(run.publisher.flush()).rejects.toBe(refused);
    await expect(run.publisher.flush()).rejects.toBe(refused);
    expect(stores).toBe(2);
    expect(run.reports).toEqual([]);
    expect(run.errors).toEqual([refused]);
  });

  it("a report that fails: onError told once, the flush rethrowing it", async () => {
    await write("720p", "seg_00000.ts", TS_VIDEO);
    await write("720p", "index.m3u8", playlist([["seg_00000.ts", 2]]));
    const refused = new Error("the Worker answered 503");
    const run = start({
      renditions: [TS_RENDITIONS[0]],
      segmentType: "mpegts",
      report: async () => {
        throw refused;
      },
    });
    await expect(run.publisher.flush()).rejects.toBe(refused);
    await expect(run.publisher.flush()).rejects.toBe(refused);
    expect(run.errors).toEqual([refused]);
    expect(run.events).toEqual(["store 720p/seg_00000.ts"]);
  });
});
