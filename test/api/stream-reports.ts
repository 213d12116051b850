import type { StreamLayout } from "../../domain/stream/layout";
import { outputKeyFor } from "../../domain/jobs";
import { internal, objectUrl, s3 } from "./harness";

/**
 * A streaming job played as its encoder plays it (docs/playback.md): claimed, then told of its
 * renditions' segments, which makes it playable once each has its first.
 */
export const STREAM_LAYOUT: StreamLayout = {
  segmentType: "mpegts",
  manifest: "hls",
  segmentSeconds: 6,
  programDateTime: false,
  renditions: [
    {
      name: "480p",
      kind: "video",
      bandwidth: 1_540_000,
      averageBandwidth: 1_400_000,
      width: 854,
      height: 480,
      frameRate: "30/1",
    },
    { name: "audio", kind: "audio", bandwidth: 128_000, averageBandwidth: 128_000 },
  ],
};

const CODECS: Record<string, string> = { "480p": "avc1.64001e", audio: "mp4a.40.2" };

/** The job claimed as its encoder claims it; the claim, for the reports that follow. */
export async function claimStream(jobId: string): Promise<number> {
  const claimed = await internal(`/jobs/${jobId}/claim`, { dispatch: 0 });
  const claim = claimed.body.job?.claim;
  if (claim === undefined) throw new Error(`claim failed: ${claimed.status} ${JSON.stringify(claimed.body)}`);
  return claim;
}

/** Reports segment `index` of every rendition (the first also carries the layout and the codecs). */
export async function reportSegments(jobId: string, claim: number, index: number, layout = STREAM_LAYOUT) {
  const reported = await internal(`/jobs/${jobId}/stream`, {
    claim,
    ...(index === 0 && { layout }),
    segments: layout.renditions.map((r) => ({
      rendition: r.name,
      index,
      duration: layout.segmentSeconds,
      ...(index === 0 && { codecs: CODECS[r.name] }),
    })),
  });
  if (reported.status !== 200)
    throw new Error(`stream report failed: ${reported.status} ${JSON.stringify(reported.body)}`);
}

/** Completes the stream's job as its encoder does once every part is joined: its ZIP stored, then reported. */
export async function completeStream(jobId: string, accountId: string, claim: number, preset = "hls_abr_264_basic") {
  const key = outputKeyFor(accountId, jobId, `${preset}.zip`);
  const put = await s3.fetch(objectUrl(key), {
    method: "PUT",
    body: "zip",
    headers: { "Content-Type": "application/zip" },
  });
  if (!put.ok) throw new Error(`upload failed: ${put.status}`);
  const done = await internal(`/jobs/${jobId}/complete`, { claim, outputKey: key, duration: 12 });
  if (done.status !== 200) throw new Error(`complete failed: ${done.status} ${JSON.stringify(done.body)}`);
}
