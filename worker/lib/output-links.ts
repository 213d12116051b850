import type { Job } from "../../drizzle/schema";
import { LINK_TTL_SECONDS, type PlanId } from "../../domain/plans";
import type { Storage, SignedLink } from "../services/storage";

export type OutputState =
  | { kind: "signed"; link: SignedLink }
  | { kind: "not-ready" }
  | { kind: "missing" }
  | { kind: "legacy" };

/**
 * Signs a completed job's output afresh. Outputs removed from storage and outputs under the
 * legacy layout cannot be signed (spec: outputUrl null cases 3 and 4; download-url 400 and 410).
 */
export async function outputState(storage: Storage, job: Job, plan: PlanId): Promise<OutputState> {
  if (job.status !== "completed") return { kind: "not-ready" };
  if (job.storageLayout === "legacy") return { kind: "legacy" };
  if (!job.outputKey || !(await storage.exists(job.outputKey))) return { kind: "missing" };
  return { kind: "signed", link: await storage.signGet(job.outputKey, LINK_TTL_SECONDS[plan]) };
}
