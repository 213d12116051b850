import type { FfmpegStage } from "../ffmpeg/run";

/** What the part's encode tells, and what ends it. */
export interface EncodeHooks {
  signal: AbortSignal;
  onProgress(fraction: number): void;
  log(stage: FfmpegStage): void;
}

/**
 * The kept part's encode, begun by the encoder that split the job as soon as the part's piece is
 * cut on its disk: before the piece is stored, which the Worker waits for to answer the part's
 * dispatch (docs/scaling.md#a-split-jobs-life). The part's delivery, once claimed, adopts it: it
 * hears its progress and its stage lines from then (those before are kept for it), and ends it
 * should the part be cancelled. Whatever ends without adopting it stops it.
 */
export interface HeadStart {
  /** Resolves with the encoded part's path, or rejects with the encode's failure. */
  adopt(hooks: EncodeHooks): Promise<string>;
  /** Ends an encode no delivery adopted; after an adoption, or the encode's end, it does nothing. */
  stop(): void;
}

export function headStart(out: string, encode: (hooks: EncodeHooks) => Promise<unknown>): HeadStart {
  const abort = new AbortController();
  const early: FfmpegStage[] = [];
  let adopted: EncodeHooks | undefined;
  const done = encode({
    signal: abort.signal,
    onProgress: (fraction) => adopted?.onProgress(fraction),
    log: (stage) => (adopted ? adopted.log(stage) : early.push(stage)),
  }).then(() => out);
  // Unadopted, its failure is nobody's to report: the part is encoded by whichever delivery claims it.
  done.catch(() => undefined);
  return {
    adopt(hooks) {
      adopted = hooks;
      for (const stage of early.splice(0)) hooks.log(stage);
      const stop = () => abort.abort(hooks.signal.reason);
      if (hooks.signal.aborted) stop();
      else hooks.signal.addEventListener("abort", stop, { once: true });
      return done.finally(() => hooks.signal.removeEventListener("abort", stop));
    },
    stop() {
      if (!adopted) abort.abort(new Error("the kept part's encode was not taken up"));
    },
  };
}
