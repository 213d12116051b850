import { mkdtemp, readFile, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PRESETS, type CatalogueEntry } from "../../domain/presets/catalogue";
import { ffmpeg, ffprobeJson } from "../support/media";
import { expectStatus } from "../support/api-client";
import { startFixtureServer, type FixtureServer } from "./fixtures";
import { startE2E, type Client, type E2E } from "./harness";
import type { Job } from "../../client";

const SECONDS = 1;
const FPS = 30;
const FRAME = 1 / FPS;
let e2e: E2E;
let fixtures: FixtureServer;
let client: Client;
let sourceUrl: string;
const jobs = new Map<string, Promise<Job>>();

/**
 * Each preset is encoded in one project. The single-file video presets (H.264, H.265, VP9) are
 * encoded here, through the whole service: the API, the encoder, the delivered output. The
 * ladders, the utilities and the audio presets are the render project's (test/render/presets/):
 * their outputs looked into (manifests, cut points, loudness) and zipped as the encoder delivers
 * them; HLS through the service is test/e2e/hls-playback.test.ts's.
 */
const ENCODED_HERE = PRESETS.filter(
  (p) => p.output === "file" && p.specifications.videoCodec !== undefined && p.specifications.videoCodec !== "copy",
);

/** 1280x720 test pattern, a tone, and two text subtitle tracks (SRT, in Matroska). */
async function makeSubtitledSource(dir: string) {
  const srt = (text: string) =>
    `1\n00:00:00,150 --> 00:00:00,450\n${text} & more\n\n2\n00:00:00,550 --> 00:00:00,850\nSecond cue\n`;
  await writeFile(join(dir, "en.srt"), srt("Hello"));
  await writeFile(join(dir, "fr.srt"), srt("Bonjour"));
  await ffmpeg([
    "-f",
    "lavfi",
    "-i",
    `testsrc2=size=1280x720:rate=${FPS}:duration=${SECONDS}`,
    "-f",
    "lavfi",
    "-i",
    `sine=frequency=440:sample_rate=48000:duration=${SECONDS}`,
    "-i",
    join(dir, "en.srt"),
    "-i",
    join(dir, "fr.srt"),
    "-map",
    "0:v",
    "-map",
    "1:a",
    "-map",
    "2:s",
    "-map",
    "3:s",
    "-metadata:s:s:0",
    "language=eng",
    "-metadata:s:s:1",
    "language=fra",
    "-c:v",
    "libx264",
    "-preset",
    "ultrafast",
    "-pix_fmt",
    "yuv420p",
    "-g",
    String(FPS),
    "-c:a",
    "aac",
    "-ac",
    "2",
    "-c:s",
    "srt",
    join(dir, "source.mkv"),
  ]);
}

beforeAll(async () => {
  [e2e, fixtures] = await Promise.all([startE2E({ allowLoopbackSources: true }), startFixtureServer()]);
  await makeSubtitledSource(fixtures.dir);
  sourceUrl = fixtures.url("source.mkv");
  client = await e2e.client("enterprise");
  // All submitted at once; the service encodes two at a time.
  for (const preset of ENCODED_HERE) {
    const created = await client.createJob({ inputUrl: sourceUrl, preset: preset.id });
    expectStatus(created, 201);
    jobs.set(preset.id, e2e.waitFor(client, created.body.id, undefined, 600_000));
  }
});
afterAll(async () => {
  await e2e?.stop();
  await fixtures?.stop();
});

async function download(preset: CatalogueEntry) {
  const job = await jobs.get(preset.id)!;
  expect(job.status, `${preset.id}: ${job.errorMessage}`).toBe("completed");
  expect(job.duration).toBeCloseTo(SECONDS, 1);
  const res = await fetch(job.outputUrl!);
  expect(res.status).toBe(200);
  return Buffer.from(await res.arrayBuffer());
}

async function saved(data: Buffer, name: string) {
  const path = join(await mkdtemp(join(tmpdir(), "out-")), name);
  await writeFile(path, data);
  return path;
}

const CODEC_NAMES: Record<string, string> = {
  libx264: "h264",
  libx265: "hevc",
  "libvpx-vp9": "vp9",
  aac: "aac",
  libopus: "opus",
};
/** The sample entry each video codec gets in its container (hvc1, not hev1, for Apple's players; WebM has none). */
const CODEC_TAGS: Record<string, string> = { h264: "avc1", hevc: "hvc1", vp9: "[0][0][0][0]" };

describe("contract §3.9 Output form by preset › every single-file video preset produces real output (end to end)", () => {
  for (const preset of ENCODED_HERE) {
    it(`${preset.id}: one ${preset.extension} file with the promised streams`, async () => {
      const path = await saved(await download(preset), `out.${preset.extension}`);
      const probe = await ffprobeJson(path);
      const video = probe.streams.find((s) => s.codec_type === "video");
      const audio = probe.streams.find((s) => s.codec_type === "audio");
      const settings = preset.specifications;
      const videoCodec = CODEC_NAMES[settings.videoCodec!];
      expect(video?.codec_name).toBe(videoCodec);
      expect(video?.codec_tag_string).toBe(CODEC_TAGS[videoCodec]);
      expect(Math.abs(Number(probe.format.duration) - SECONDS)).toBeLessThanOrEqual(FRAME + 0.05);
      expect(audio).toMatchObject({ codec_name: CODEC_NAMES[settings.audioCodec!], channels: 2, sample_rate: "48000" });
      const [width, height] = settings.resolution!.split("x").map(Number);
      expect(video).toMatchObject({ width, height });
      if (preset.extension === "mp4") {
        // +faststart: the moov atom comes before mdat.
        const text = (await readFile(path)).toString("latin1");
        expect(text.indexOf("moov")).toBeLessThan(text.indexOf("mdat"));
      }
    });
  }
});
