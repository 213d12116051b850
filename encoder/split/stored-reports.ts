/**
 * Tells the Worker which tasks' inputs are stored (docs/scaling.md#a-split-jobs-life), one call
 * at a time: each call names every input stored so far, and those stored while a call is under
 * way go together in the next. The first call hands the plan over; a call that fails stops the
 * reports, and `onFailure` hears why at once, so the split stage stops storing pieces nobody will
 * take.
 */
export function storedReports(
  send: (stored: readonly number[]) => Promise<unknown>,
  onFailure: (err: unknown) => void,
) {
  const stored: number[] = [];
  let told = 0;
  let failure: { err: unknown } | null = null;
  let sending: Promise<void> = Promise.resolve();
  let busy = false;

  async function drain(): Promise<void> {
    busy = true;
    try {
      while (!failure && told < stored.length) {
        const batch = [...stored];
        await send(batch);
        told = batch.length;
      }
    } catch (err) {
      failure = { err };
      onFailure(err);
    } finally {
      busy = false;
    }
  }

  return {
    /** The task's input is stored: told now, or with the call after the one under way. */
    add(index: number) {
      stored.push(index);
      if (!busy) sending = drain();
    },
    /** Resolves once the Worker was told of every input added; rejects with the call that failed. */
    async settled(): Promise<void> {
      await sending;
      if (failure) throw failure.err;
    },
    /** Whether the Worker took the plan: the job's scratch is then its to delete when the job ends. */
    handedOver: () => told > 0,
  };
}
