import { describe, expect, it } from "vitest";
import type { SplitPlan } from "../../../domain/split";
import type { ClaimedJob, InternalApi } from "../../../encoder/internal-api";
import type { RenderContext } from "../../../encoder/jobs/pipeline";
import type { StreamDeps } from "../../../encoder/jobs/stream-job";
import { handOffStream } from "../../../encoder/jobs/stream-parts";

/**
 * A stream's hand-over (docs/playback.md#how-a-stream-is-made): the layout goes first, then the
 * plan; the encoder that split the job keeps the first part and the audio, the stream's start,
 * where work can run beside its delivery, so that no other task's message takes a free encoder
 * before them.
 */
const job = { id: "5b0f3c1e-8d2a-4c1b-9e7f-0a1b2c3d4e5f", claim: 3, preset: "hls_abr_264_standard" } as ClaimedJob;
const plan = { parts: [{ index: 0 }, { index: 1 }, { index: 2 }], audio: true, stream: { layout: {} } } as SplitPlan;

function handOverWith(alongside: RenderContext["alongside"], kept?: { index: number; dispatch: number }[]) {
  const calls: string[] = [];
  const splits: { keep?: readonly number[]; stored?: readonly number[] }[] = [];
  const api = {
    stream: async () => {
      calls.push("stream");
      return { status: "processing", playable: false };
    },
    split: async (
      _id: string,
      _claim: number,
      _plan: SplitPlan,
      stored?: readonly number[],
      keep?: readonly number[],
    ) => {
      calls.push("split");
      splits.push({ keep, stored });
      return kept && keep ? { parts: 3, kept: kept.filter((k) => keep.includes(k.index)) } : { parts: 3 };
    },
  } as unknown as InternalApi;
  const ctx = { alongside } as RenderContext;
  return { calls, splits, run: () => handOffStream({ api } as StreamDeps, job, ctx, plan, 42) };
}

describe("a stream's hand-over", () => {
  it("keeps the first part and the audio and runs them beside this delivery, under the dispatches the Worker gave them", async () => {
    const beside: unknown[] = [];
    const { calls, splits, run } = handOverWith(
      (delivery, headStart) => beside.push({ delivery, headStart }),
      [
        { index: 0, dispatch: 7 },
        { index: 3, dispatch: 2 },
      ],
    );
    expect(await run()).toEqual({ handedOff: { parts: 3, audio: true, reads: "ranges" }, duration: 42 });
    expect(calls).toEqual(["stream", "split"]);
    // Every task is ready at once (each reads the source itself): none is held back as unstored.
    expect(splits).toEqual([{ keep: [0, 3], stored: undefined }]);
    expect(beside).toEqual([
      { delivery: { jobId: job.id, dispatch: 7, part: 0 }, headStart: undefined },
      { delivery: { jobId: job.id, dispatch: 2, part: 3 }, headStart: undefined },
    ]);
  });

  it("asks to keep nothing where nothing can run beside, and runs nothing the Worker did not keep", async () => {
    const none = handOverWith(undefined, [{ index: 0, dispatch: 7 }]);
    await none.run();
    expect(none.splits).toEqual([{ keep: undefined, stored: undefined }]);
    const beside: unknown[] = [];
    const refused = handOverWith((delivery) => beside.push(delivery));
    await refused.run();
    expect(refused.splits).toEqual([{ keep: [0, 3], stored: undefined }]);
    expect(beside).toEqual([]);
  });
});
