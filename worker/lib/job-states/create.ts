/**
 * Creation, from no state to `queued` (docs/contract.md §4.2, row 1): the quota unit claimed and
 * the job inserted in one statement, the creator's key and plan checked in it (lib/quota.ts holds
 * the claim).
 */
import { eq, inArray, sql, type SQL } from "drizzle-orm";
import { accounts, apiKeys, jobs } from "../../../drizzle/schema";
import type { JobStatus } from "../../../domain/jobs";
import { PLAN_IDS, type PlanId } from "../../../domain/plans";
import type { Caller } from "../../context";
import { renderedPerShape, type Database } from "../../services/db";
import { activeKey } from "../callers";
import { claimUnit, unitsUsed } from "../quota";

/**
 * Whose job it is: a caller already authenticated, or (POST /jobs) an API key that the
 * creation's own statement checks, finding the caller in the same round trip.
 */
export type Creator = { caller: Caller } | { keyHash: string };

export interface NewJob {
  preset: string;
  inputUrl: string;
  clientMetadata: Record<string, unknown> | null;
  edl: unknown;
  createdAt: Date;
}

/** What the caller's plan decides about a creation, for whichever plan the caller turns out to have. */
export interface CreationRules {
  /** The calendar month ("YYYY-MM", UTC) the unit counts against. */
  period: string;
  /** Each plan's units a month. */
  limits: Record<PlanId, number>;
  /** The plans allowed to create this job (those that include its preset). */
  plans: readonly PlanId[];
}

export type Creation =
  | { outcome: "created"; caller: Caller; jobId: string; used: number }
  | { outcome: "quotaUsedUp"; caller: Caller; used: number }
  | { outcome: "presetNotAllowed"; caller: Caller }
  | { outcome: "unknownKey" };

const asJsonb = (value: unknown) => (value === null || value === undefined ? null : JSON.stringify(value));

/** Which of the two creation statements: for a caller already known, or for a key the statement checks. */
type CreatorKind = "caller" | "key";

/** A value of the creation statement, filled in at each creation. */
const value = (name: string) => sql.placeholder(name);

/** The creator as one row: the caller, its month's units and whether its plan may create the job. None for a key that does not authenticate. */
function creatorRow(kind: CreatorKind, plans: readonly PlanId[]): SQL {
  if (kind === "caller") {
    return sql`select ${value("keyId")}::uuid as key_id, ${value("accountId")}::uuid as account_id, ${value("plan")}::text as plan,
      ${value("webhookUrl")}::text as webhook_url, ${value("callerLimit")}::int as claim_limit, ${value("allowed")}::boolean as allowed`;
  }
  const limit = sql.join(
    PLAN_IDS.map((plan) => sql`when ${plan} then ${value(`limit:${plan}`)}::int`),
    sql` `,
  );
  return sql`select ${apiKeys.id} as key_id, ${accounts.id} as account_id, ${accounts.plan} as plan, ${accounts.webhookUrl} as webhook_url,
      case ${accounts.plan} ${limit} end as claim_limit, ${inArray(accounts.plan, [...plans])} as allowed
    from ${apiKeys} inner join ${accounts} on ${eq(accounts.id, apiKeys.accountId)}
    where ${activeKey(value("keyHash"))}
    limit 1`;
}

/** The creation statement for a creator of `kind` and a preset that `plans` may use; every other value a placeholder. */
function creationStatement(kind: CreatorKind, plans: readonly PlanId[]): SQL {
  const allowedAccount = sql`(select account_id from creator where allowed)`;
  return sql`
    with creator as (${creatorRow(kind, plans)}),
    claim as (${claimUnit({ accountId: allowedAccount, period: value("period"), limit: sql`(select claim_limit from creator where allowed)` })}),
    created as (
      insert into ${jobs} (account_id, status, preset, input_url, client_metadata, edl, quota_period, created_at)
      select ${allowedAccount}, ${"queued" satisfies JobStatus}, ${value("preset")}, ${value("inputUrl")}, ${value("clientMetadata")}::jsonb,
        ${value("edl")}::jsonb, ${value("period")}, ${value("createdAt")}::timestamptz
      from claim
      returning id
    )
    select creator.key_id, creator.account_id, creator.plan, creator.webhook_url, creator.allowed, claim.count as used, created.id
    from creator left join claim on true left join created on true`;
}

type CreationRow = {
  key_id: string | null;
  account_id: string;
  plan: PlanId;
  webhook_url: string | null;
  allowed: boolean;
  used: number | null;
  id: string | null;
};

/**
 * The creation statement, rendered once for each creator kind and list of plans (a handful:
 * presets share their lists) rather than composed afresh at every creation.
 */
const runCreation = renderedPerShape<{ kind: CreatorKind; plans: readonly PlanId[] }, CreationRow>(
  ({ kind, plans }) => `${kind}:${plans.join(",")}`,
  ({ kind, plans }) => creationStatement(kind, plans),
);

/**
 * Claims a quota unit and inserts the queued job in one statement: the job is inserted from the
 * claim's row, so only when a unit was taken, and the unit only when the creator's plan allows
 * the job. A creator given by its key is checked in the same statement, so a creation is one
 * round trip over Neon's HTTP path, whoever calls, with no transaction around it: every
 * statement a batch adds (BEGIN, COMMIT, a read) is one more between Neon and Postgres. Only a
 * quota refusal reads the counter afterwards, for its `usage.current`: claims stop at the limit,
 * so what it reads is the count that refused it unless a unit was given back meanwhile, and then
 * it is the count now.
 */
export async function create(db: Database, creator: Creator, job: NewJob, rules: CreationRules): Promise<Creation> {
  const { limits, plans, period } = rules;
  const shared = {
    period,
    preset: job.preset,
    inputUrl: job.inputUrl,
    clientMetadata: asJsonb(job.clientMetadata),
    edl: asJsonb(job.edl),
    createdAt: job.createdAt.toISOString(),
  };
  const [kind, values]: [CreatorKind, Record<string, unknown>] =
    "caller" in creator
      ? [
          "caller",
          {
            ...shared,
            ...creator.caller,
            callerLimit: limits[creator.caller.plan],
            allowed: plans.includes(creator.caller.plan),
          },
        ]
      : [
          "key",
          {
            ...shared,
            keyHash: creator.keyHash,
            ...Object.fromEntries(PLAN_IDS.map((plan) => [`limit:${plan}`, limits[plan]])),
          },
        ];
  const [row] = await runCreation(db, { kind, plans }, values);
  if (!row) return { outcome: "unknownKey" };
  const caller: Caller = { keyId: row.key_id, accountId: row.account_id, plan: row.plan, webhookUrl: row.webhook_url };
  if (!row.allowed) return { outcome: "presetNotAllowed", caller };
  if (row.id !== null) return { outcome: "created", caller, jobId: row.id, used: Number(row.used) };
  const [counter] = await unitsUsed(db, { accountId: caller.accountId, period });
  return { outcome: "quotaUsedUp", caller, used: counter?.count ?? 0 };
}
