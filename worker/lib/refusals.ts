/**
 * Refusals whose wording both the answers and the OpenAPI document's examples use, so the two
 * cannot drift apart.
 */
import type { JobStatus } from "../../domain/jobs";
import {
  MAX_PENDING_UPLOADS,
  MAX_UPLOAD_BYTES,
  PLAN_DISPLAY_NAMES,
  planIncludes,
  type PlanId,
  UPLOAD_STORAGE_BYTES,
} from "../../domain/plans";
import { PRESET_IDS, PRESETS, type CatalogueEntry } from "../../domain/presets/catalogue";
import { upgradeMessage } from "../../domain/presets/view";
import { ApiError } from "../errors";
import type { Completion, UploadHoldings } from "./uploads";

export function unknownPreset(requested: string) {
  return ApiError.invalidPreset({
    message: `Unknown preset '${requested}'. See availablePresets or GET /api/v1/presets.`,
    availablePresets: [...PRESET_IDS],
  });
}

export function presetNotAllowed(preset: CatalogueEntry, plan: PlanId) {
  return ApiError.presetNotAllowed({
    message: `The preset '${preset.id}' is not available on the ${PLAN_DISPLAY_NAMES[plan]} plan.`,
    availablePresets: PRESETS.filter((p) => planIncludes(plan, p.requiredPlan)).map((p) => p.id),
    requiredPlan: preset.requiredPlan,
    yourPlan: plan,
    upgradeMessage: upgradeMessage(preset),
  });
}

export function quotaUsedUp(plan: PlanId, limit: number, current: number) {
  return ApiError.usageLimitExceeded({
    message: `You have used all ${limit} jobs of your ${PLAN_DISPLAY_NAMES[plan]} plan this month. The quota resets at the start of the next calendar month (UTC), or when the plan changes.`,
    usage: { current, limit, plan: PLAN_DISPLAY_NAMES[plan] },
  });
}

export function notCancellable(status: JobStatus) {
  return ApiError.invalidOperation(
    `Job cannot be cancelled: its status is '${status}'. Only queued or processing jobs can be cancelled.`,
  );
}

export const idempotencyConflict = {
  otherBody: () => ApiError.conflict("This Idempotency-Key was used with a different request body."),
  inProgress: () => ApiError.conflict("A request with this Idempotency-Key is still in progress; retry shortly."),
};

const GiB = 1024 * 1024 * 1024;

/** An upload's declared size over the plan's maximum (docs/uploads.md). */
export function sizeOverPlan(plan: PlanId) {
  const limit = MAX_UPLOAD_BYTES[plan];
  return ApiError.payloadTooLarge(
    `The upload's size is over the ${PLAN_DISPLAY_NAMES[plan]} plan's maximum of ${limit / GiB} GiB (${limit} bytes).`,
  );
}

/** The account's pending uploads at the plan's cap (docs/uploads.md): how many, and when they expire. */
export function pendingUploadsCapped(plan: PlanId, held: Pick<UploadHoldings, "open" | "firstExpiry" | "lastExpiry">) {
  const limit = MAX_PENDING_UPLOADS[plan];
  const first = held.firstExpiry?.toISOString();
  const last = held.lastExpiry?.toISOString();
  const when = first === last ? `it expires at ${first}` : `the first expires at ${first}, the last at ${last}`;
  return ApiError.usageLimitExceeded({
    message: `You have ${held.open} uploads open (pending), the most the ${PLAN_DISPLAY_NAMES[plan]} plan allows at once (${limit}). Finish uploading one, or wait until one expires: ${when}.`,
    usage: { current: held.open, limit, plan: PLAN_DISPLAY_NAMES[plan] },
  });
}

/** An upload that would take the account's uploads over the plan's storage bound (docs/uploads.md). */
export function uploadStorageFull(plan: PlanId, size: number, held: Pick<UploadHoldings, "bytes" | "nextRelease">) {
  const limit = UPLOAD_STORAGE_BYTES[plan];
  const next = held.nextRelease ? ` The next of them stops counting at ${held.nextRelease.toISOString()}.` : "";
  return ApiError.usageLimitExceeded({
    message: `This upload's ${size} bytes would take your uploads to ${held.bytes + size} bytes, over the ${PLAN_DISPLAY_NAMES[plan]} plan's ${limit / GiB} GiB (${limit} bytes). Uploads count while pending, until they expire, and once completed, until they are deleted.${next}`,
    usage: { current: held.bytes, limit, plan: PLAN_DISPLAY_NAMES[plan] },
  });
}

export const uploadNotFound = () => ApiError.notFound("Upload not found");

export const singleUploadCompletes = () =>
  ApiError.conflict("This is a single upload: single uploads complete themselves once the PUT succeeds.");

export const uploadExpired = () =>
  ApiError.conflict("The upload expired before it was completed; create a new upload.");

/** Why a completion that did not complete was refused. */
export function completionRefusal(completion: Exclude<Completion, { kind: "completed" }>) {
  switch (completion.kind) {
    case "single":
      return singleUploadCompletes();
    case "expired":
      return uploadExpired();
    case "missing":
      return partsMissing(completion.partNumbers);
  }
}

/** The parts storage does not hold, or holds at another size than planned. */
export function partsMissing(partNumbers: number[]) {
  const shown =
    partNumbers.length > 50
      ? `${partNumbers.slice(0, 50).join(", ")} and ${partNumbers.length - 50} more`
      : partNumbers.join(", ");
  return ApiError.conflict(
    `The upload cannot be completed: parts missing or not of their planned size: ${shown}. Upload them with their URLs, then complete again.`,
  );
}
