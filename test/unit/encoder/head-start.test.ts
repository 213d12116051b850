import { describe, expect, it } from "vitest";
import type { FfmpegStage } from "../../../encoder/ffmpeg/run";
import { type EncodeHooks, headStart } from "../../../encoder/split/head-start";

/** An encode that runs until told to finish, or until its signal ends it. */
function controlledEncode() {
  let hooks: EncodeHooks | undefined;
  let finish: () => void = () => undefined;
  const encode = (given: EncodeHooks) => {
    hooks = given;
    given.log({ stage: "ffmpeg-start", mediaSeconds: 2 });
    return new Promise<void>((resolve, reject) => {
      finish = resolve;
      given.signal.addEventListener("abort", () => reject(given.signal.reason), { once: true });
    });
  };
  return { encode, hooks: () => hooks!, finish: () => finish() };
}

const adopter = (signal = new AbortController().signal) => {
  const heard = { progress: [] as number[], stages: [] as FfmpegStage["stage"][] };
  return {
    heard,
    hooks: {
      signal,
      onProgress: (f: number) => heard.progress.push(f),
      log: (stage: FfmpegStage) => heard.stages.push(stage.stage),
    },
  };
};

describe("the kept part's encode, begun before its claim", () => {
  it("adopted, its delivery hears the stage lines from before and the progress from then, and gets the part's path", async () => {
    const run = controlledEncode();
    const head = headStart("/work/pieces/0.out.nut", run.encode);
    run.hooks().onProgress(0.2);
    const { heard, hooks } = adopter();
    const done = head.adopt(hooks);
    run.hooks().onProgress(0.5);
    run.hooks().log({ stage: "ffmpeg-end", mediaSeconds: 2, wallSeconds: 1 });
    run.finish();
    expect(await done).toBe("/work/pieces/0.out.nut");
    expect(heard).toEqual({ progress: [0.5], stages: ["ffmpeg-start", "ffmpeg-end"] });
  });

  it("its delivery cancelled, the encode ends, and the adoption rejects with the cancel's reason", async () => {
    const run = controlledEncode();
    const head = headStart("/out", run.encode);
    const cancel = new AbortController();
    const done = head.adopt(adopter(cancel.signal).hooks);
    cancel.abort(new Error("cancelled"));
    await expect(done).rejects.toThrow("cancelled");
    expect(run.hooks().signal.aborted).toBe(true);
  });

  it("stopped before any delivery adopts it, the encode ends; stopped after, it runs on for its adopter", async () => {
    const unadopted = controlledEncode();
    headStart("/out", unadopted.encode).stop();
    expect(unadopted.hooks().signal.aborted).toBe(true);

    const run = controlledEncode();
    const head = headStart("/out", run.encode);
    const done = head.adopt(adopter().hooks);
    head.stop();
    expect(run.hooks().signal.aborted).toBe(false);
    run.finish();
    expect(await done).toBe("/out");
  });
});
