import type { SplitPlan } from "../../domain/split";
import type { ClaimedJob, InternalApi } from "../internal-api";
import type { HandedOff, RenderContext } from "./pipeline";

/**
 * Hands over a plan whose tasks each read the source itself (a stream's, or a single file's read
 * by ranges), so every task is ready at once. Where work can run beside this delivery, this
 * encoder keeps the tasks of `start` (those the output's start waits for) rather than leave them
 * to whichever messages reach a free encoder first: a message that finds every encoder busy is
 * tried again only after QStash's back-off.
 */
export async function handOverPlan(
  api: InternalApi,
  job: ClaimedJob,
  ctx: RenderContext,
  plan: SplitPlan,
  start: readonly number[],
  duration: number,
): Promise<HandedOff> {
  const answer = await api.split(job.id, job.claim, plan, undefined, ctx.alongside ? start : undefined);
  for (const task of answer.kept ?? []) ctx.alongside?.({ jobId: job.id, dispatch: task.dispatch, part: task.index });
  return { handedOff: { parts: plan.parts.length, audio: plan.audio, reads: "ranges" }, duration };
}
