import { z } from "zod";
import { DISPATCH_RETRY_DELAY } from "../domain/jobs";
import { DEFAULT_MONTHLY_QUOTA, PLAN_IDS, type PlanId } from "../domain/plans";
import { parseRetryDelay } from "../domain/retry-delay";
import { MAX_PART_PARALLELISM } from "../domain/pool";

/** Bindings and secrets the Worker reads; validated once per isolate at the fetch boundary. */
const envSchema = z
  .object({
    DATABASE_URL: z.string().url(),
    /**
     * Local only: the local cloud's stand-in for Neon's SQL-over-HTTP endpoint
     * (`neonConfig.fetchEndpoint`). Unset in production, where the driver finds Neon's own.
     */
    NEON_HTTP_ENDPOINT: z.string().url().optional(),
    S3_ENDPOINT: z.string().url(),
    S3_REGION: z.string().default("auto"),
    S3_BUCKET: z.string().min(1),
    S3_ACCESS_KEY_ID: z.string().min(1),
    S3_SECRET_ACCESS_KEY: z.string().min(1),
    QSTASH_URL: z.string().url().default("https://qstash.upstash.io"),
    QSTASH_TOKEN: z.string().min(1),
    UPSTASH_REDIS_REST_URL: z.string().url(),
    UPSTASH_REDIS_REST_TOKEN: z.string().min(1),
    /** Where QStash delivers jobs: the encoder's public address. */
    ENCODER_URL: z.string().url(),
    /** This Worker's own public base URL: QStash delivers each webhook attempt here to be signed. */
    PUBLIC_URL: z.string().url(),
    /** Verify QStash's deliveries of webhook attempts (Upstash-Signature). */
    QSTASH_CURRENT_SIGNING_KEY: z.string().min(1),
    QSTASH_NEXT_SIGNING_KEY: z.string().min(1),
    /** Shared secret for the encoder's HMAC-signed calls to /internal. */
    INTERNAL_SECRET: z.string().min(16),
    /**
     * Local development only (`npm run dev` and the test stacks set it; wrangler.toml keeps it
     * "false"): webhooks may go to loopback addresses, where the local receivers listen.
     */
    ALLOW_LOOPBACK_WEBHOOKS: z
      .enum(["true", "false"])
      .default("false")
      .transform((value) => value === "true"),
    /**
     * How long the first retry of a job waits after its source failed (a download or decode
     * failure); each later retry waits twice as long as the one before.
     */
    JOB_RETRY_DELAY_SECONDS: z.coerce.number().nonnegative().default(10),
    /**
     * Split jobs' parts and joins in flight at once over the encoder pool (QStash's flow control,
     * key `parts`). Unset, it follows the pool (FLY_APP below), or is 8 (docs/deploying.md#the-encoder-pool).
     */
    PART_PARALLELISM: z.coerce.number().int().min(1).max(MAX_PART_PARALLELISM).optional(),
    /**
     * The encoder's Fly app and a read-only token for it: the Worker counts the app's Machines
     * (Fly's Machines API at FLY_API_URL) and sets the parts' parallelism by them.
     */
    FLY_APP: z.string().min(1).optional(),
    FLY_API_TOKEN: z.string().min(1).optional(),
    FLY_API_URL: z.string().url().default("https://api.machines.dev"),
    /**
     * How long QStash waits before each redelivery of a job's, a part's or a join's message: a
     * QStash retry-delay expression (milliseconds over `retried`), checked here so that one QStash
     * would refuse stops the Worker's start, not every publish.
     */
    DISPATCH_RETRY_DELAY: z.string().default(DISPATCH_RETRY_DELAY).refine(isRetryDelay, {
      message: "must be a QStash retry-delay expression, e.g. 2000 * pow(3, retried)",
    }),
    /**
     * Optional JSON object overriding monthly quotas per plan, e.g. {"pro":5000}. Checked here, so
     * that a bad one stops the Worker's start rather than every creation later.
     */
    QUOTA_LIMITS: z
      .string()
      .optional()
      .refine(
        (text) => text === undefined || quotaOverrides(text) !== null,
        "must be a JSON object of plan → non-negative integer",
      ),
  })
  .superRefine((env, ctx) => {
    // One without the other would leave the pool uncounted without a word.
    if (env.FLY_APP !== undefined && env.FLY_API_TOKEN === undefined)
      ctx.addIssue({ code: "custom", path: ["FLY_API_TOKEN"], message: "FLY_APP needs FLY_API_TOKEN" });
    if (env.FLY_API_TOKEN !== undefined && env.FLY_APP === undefined)
      ctx.addIssue({ code: "custom", path: ["FLY_APP"], message: "FLY_API_TOKEN needs FLY_APP" });
  });

export type Env = z.infer<typeof envSchema>;

export function parseEnv(raw: unknown): Env {
  const result = envSchema.safeParse(raw);
  if (!result.success) {
    const names = result.error.issues.map((i) => i.path.join(".")).join(", ");
    throw new Error(`Worker configuration is invalid or missing: ${names}`);
  }
  return result.data;
}

function isRetryDelay(expression: string): boolean {
  try {
    parseRetryDelay(expression);
    return true;
  } catch {
    return false;
  }
}

const quotaOverridesSchema = z.partialRecord(z.enum(PLAN_IDS), z.number().int().nonnegative());

/** QUOTA_LIMITS's overrides, or null when it is not JSON of that shape. */
function quotaOverrides(text: string): Partial<Record<PlanId, number>> | null {
  try {
    return quotaOverridesSchema.safeParse(JSON.parse(text)).data ?? null;
  } catch {
    return null;
  }
}

/** Each plan's units a month: the defaults, with QUOTA_LIMITS's overrides. */
export function monthlyQuotas(env: Pick<Env, "QUOTA_LIMITS">): Record<PlanId, number> {
  if (!env.QUOTA_LIMITS) return DEFAULT_MONTHLY_QUOTA;
  const overrides = quotaOverrides(env.QUOTA_LIMITS);
  if (!overrides) throw new Error("QUOTA_LIMITS must be a JSON object of plan → non-negative integer");
  return { ...DEFAULT_MONTHLY_QUOTA, ...overrides };
}

export function monthlyQuota(env: Pick<Env, "QUOTA_LIMITS">, plan: PlanId): number {
  return monthlyQuotas(env)[plan];
}
