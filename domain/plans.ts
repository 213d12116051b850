/** Plans and their limits. Identifiers are the contract's; display names are what people read. */

export const PLAN_IDS = ["free", "pro", "business", "enterprise"] as const;
export type PlanId = (typeof PLAN_IDS)[number];

export const PLAN_DISPLAY_NAMES: Record<PlanId, string> = {
  free: "Starter",
  pro: "Indie/Pro",
  business: "Business",
  enterprise: "Enterprise",
};

/** Monthly job quota: free's 10 is the contract's (docs/contract.md §9.1), the others ours (docs/decisions.md). */
export const DEFAULT_MONTHLY_QUOTA: Record<PlanId, number> = {
  free: 10,
  pro: 1_000,
  business: 10_000,
  enterprise: 100_000,
};

/** Longest source a preset job may encode, in seconds (docs/contract.md §9.1). */
export const MAX_SOURCE_SECONDS: Record<PlanId, number> = {
  free: 10 * 60,
  pro: 60 * 60,
  business: 180 * 60,
  enterprise: 480 * 60,
};

/** Signed link lifetime in seconds (docs/contract.md §9.1); 7 days is the ceiling for any link. */
export const LINK_TTL_SECONDS: Record<PlanId, number> = {
  free: 4 * 60 * 60,
  pro: 7 * 24 * 60 * 60,
  business: 7 * 24 * 60 * 60,
  enterprise: 7 * 24 * 60 * 60,
};

const GiB = 1024 * 1024 * 1024;

/**
 * Largest file a direct upload may declare, in bytes (docs/uploads.md). No plan goes past the
 * encoder's own source cap, MAX_SOURCE_BYTES (5 GiB): an upload is only ever a job's source.
 */
export const MAX_UPLOAD_BYTES: Record<PlanId, number> = {
  free: 1 * GiB,
  pro: 5 * GiB,
  business: 5 * GiB,
  enterprise: 5 * GiB,
};

/**
 * Direct uploads open at once (`pending`, before their expiresAt), in all (docs/uploads.md):
 * each holds presigned URLs for a day, so the cap bounds what an account can have in flight.
 */
export const MAX_PENDING_UPLOADS: Record<PlanId, number> = {
  free: 10,
  pro: 50,
  business: 100,
  enterprise: 200,
};

/**
 * Bytes an account's uploads may hold at once, pending (as declared) and completed until deleted
 * (docs/uploads.md). At least five of the plan's largest uploads.
 */
export const UPLOAD_STORAGE_BYTES: Record<PlanId, number> = {
  free: 5 * GiB,
  pro: 100 * GiB,
  business: 500 * GiB,
  enterprise: 2048 * GiB,
};

const DAY_SECONDS = 24 * 60 * 60;

/**
 * How long an upload's object is kept, counted from its creation; the sweep deletes it then
 * (docs/uploads.md). The time is fixed on the upload when it is made, so a change of plan later
 * moves no deletion before a link already signed.
 */
export const UPLOAD_RETENTION_SECONDS: Record<PlanId, number> = {
  free: 7 * DAY_SECONDS,
  pro: 30 * DAY_SECONDS,
  business: 30 * DAY_SECONDS,
  enterprise: 90 * DAY_SECONDS,
};

function planRank(plan: PlanId): number {
  return PLAN_IDS.indexOf(plan);
}

/** Plans are cumulative: a plan includes everything the plans below it include. */
export function planIncludes(plan: PlanId, required: PlanId): boolean {
  return planRank(plan) >= planRank(required);
}

export function isPlanId(value: unknown): value is PlanId {
  return typeof value === "string" && (PLAN_IDS as readonly string[]).includes(value);
}
