import { isNotNull } from "drizzle-orm";
import { doublePrecision, index, integer, jsonb, pgTable, primaryKey, real, text, uuid } from "drizzle-orm/pg-core";
import { JOB_STATUSES } from "../../domain/jobs";
import type { SplitPlan } from "../../domain/split";
import type { StreamLayout } from "../../domain/stream/layout";
import { accounts } from "./accounts";
import { createdAt, tstz } from "./columns";

export const JOB_STAGES = ["whole", "cutting", "parts", "join"] as const;
export type JobStage = (typeof JOB_STAGES)[number];

export const jobs = pgTable(
  "jobs",
  {
    id: uuid("id").primaryKey().defaultRandom(),
    accountId: uuid("account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    status: text("status", { enum: JOB_STATUSES }).notNull(),
    preset: text("preset").notNull(),
    inputUrl: text("input_url").notNull(),
    /** The validated timeline of an `edl_custom` job. */
    edl: jsonb("edl"),
    /** The caller's free-form metadata from creation. */
    clientMetadata: jsonb("client_metadata").$type<Record<string, unknown>>(),
    /**
     * `legacy` outputs were written under an older key scheme that cannot be signed (docs/contract.md §5.5: 410);
     * `v2` is the current layout, `outputs/<accountId>/<jobId>/<file>`.
     */
    storageLayout: text("storage_layout", { enum: ["legacy", "v2"] })
      .notNull()
      .default("v2"),
    outputKey: text("output_key"),
    duration: doublePrecision("duration"),
    errorMessage: text("error_message"),
    /** Failed attempts at the source (download, decode) that were retried; the contract's `retryCount`. */
    retryCount: integer("retry_count").notNull().default(0),
    /** Attempts that ended without the encoder's report: its crashes and lost deliveries (MAX_INTERRUPTIONS). */
    interruptions: integer("interruptions").notNull().default(0),
    /**
     * The job's current dispatch: each message carries its number, and only a delivery of the
     * current one may claim the job, so a message an earlier dispatch left behind does nothing.
     */
    dispatch: integer("dispatch").notNull().default(0),
    /**
     * Who may act on the job: each claim takes the next lease, and so does the sweep when it takes
     * the job from an encoder gone quiet. Each heartbeat and report names its claim's lease, and
     * one of an earlier lease is refused, so one encoder at a time works on the job.
     */
    lease: integer("lease").notNull().default(0),
    progress: real("progress"),
    /** QStash message that carries the job to the encoder; deleted on cancel. */
    messageId: text("message_id"),
    /** Period ("YYYY-MM") whose quota unit this job holds, so a release returns the right one. */
    quotaPeriod: text("quota_period").notNull(),
    ...createdAt,
    startedAt: tstz("started_at"),
    completedAt: tstz("completed_at"),
    lastCheckedAt: tstz("last_checked_at"),
    cancelledAt: tstz("cancelled_at"),
    /**
     * The webhook outbox: set by the transition that finishes the job (in the same statement),
     * cleared once the job's webhook is handed to QStash or its account turns out to have none.
     * The sweep publishes for jobs left pending (lib/webhooks.ts).
     */
    webhookPendingSince: tstz("webhook_pending_since"),
    /**
     * A split job's stage (docs/scaling.md): `whole` until its encoder hands the plan over, then
     * `cutting` while it still stores pieces (the parts whose pieces are stored already run),
     * `parts` while the parts run, then `join`. A job that does not split stays `whole`.
     */
    stage: text("stage", { enum: JOB_STAGES }).notNull().default("whole"),
    /** The parts' plan, as the encoder that split the job made it; null for a job that did not split. */
    split: jsonb("split").$type<SplitPlan>(),
    /**
     * Set by the transition that ends a split job (in the same statement), cleared once everything
     * under its scratch prefix is deleted; the sweep deletes for jobs left pending (lib/scratch.ts).
     */
    scratchPendingSince: tstz("scratch_pending_since"),
    /**
     * A streaming output's renditions, as its encoder reported them with its first segments
     * (docs/playback.md); null for other presets and until then.
     */
    stream: jsonb("stream").$type<StreamLayout>(),
    /** When every rendition had its first segment stored: the moment the playback link is given. */
    playableAt: tstz("playable_at"),
    /**
     * The job.playable webhook's outbox, set in the statement that makes the job playable and
     * cleared once it is handed to QStash (lib/webhooks.ts); the sweep publishes it when left.
     */
    playableWebhookPendingSince: tstz("playable_webhook_pending_since"),
  },
  (t) => [
    index("jobs_account_created_idx").on(t.accountId, t.createdAt.desc(), t.id.desc()),
    index("jobs_status_checked_idx").on(t.status, t.lastCheckedAt),
    // Only the few jobs whose webhook is on its way: the sweep's lookup stays small.
    index("jobs_webhook_pending_idx").on(t.webhookPendingSince).where(isNotNull(t.webhookPendingSince)),
    index("jobs_scratch_pending_idx").on(t.scratchPendingSince).where(isNotNull(t.scratchPendingSince)),
    index("jobs_playable_webhook_pending_idx")
      .on(t.playableWebhookPendingSince)
      .where(isNotNull(t.playableWebhookPendingSince)),
  ],
);

export type Job = typeof jobs.$inferSelect;
export type JobStatus = Job["status"];

/** `cutting`: its input is not stored yet, so it is not dispatched (docs/scaling.md#a-split-jobs-life). */
export const PART_STATES = ["cutting", "queued", "processing", "done"] as const;
export type PartState = (typeof PART_STATES)[number];

/**
 * One part of a split job (docs/scaling.md): its frames, and the same bookkeeping a job has for
 * its own attempts (dispatch, lease, interruptions), so a part is dispatched, claimed, taken over
 * and retried on its own. The job's status stays `processing` while its parts run.
 */
export const jobParts = pgTable(
  "job_parts",
  {
    jobId: uuid("job_id")
      .notNull()
      .references(() => jobs.id, { onDelete: "cascade" }),
    index: integer("index").notNull(),
    firstFrame: integer("first_frame").notNull(),
    frameCount: integer("frame_count").notNull(),
    state: text("state", { enum: PART_STATES }).notNull().default("queued"),
    /** Failures an encoder reported about this part (PART_ATTEMPTS). */
    attempts: integer("attempts").notNull().default(0),
    /** Attempts that ended without a report: an encoder that died, a message lost (MAX_INTERRUPTIONS). */
    interruptions: integer("interruptions").notNull().default(0),
    /** The part's current dispatch: only a delivery of its message claims the part. */
    dispatch: integer("dispatch").notNull().default(0),
    /** The part's latest claim, which its heartbeats and reports name. */
    lease: integer("lease").notNull().default(0),
    progress: real("progress").notNull().default(0),
    /** The latest beat of its encoder, or when the part last changed state. */
    heartbeatAt: tstz("heartbeat_at").notNull().defaultNow(),
    /** QStash message that carries the part's current dispatch; null until it is recorded. */
    messageId: text("message_id"),
    outputKey: text("output_key"),
    /** The last failure an encoder reported about this part. */
    errorMessage: text("error_message"),
    ...createdAt,
    completedAt: tstz("completed_at"),
  },
  (t) => [
    primaryKey({ columns: [t.jobId, t.index] }),
    // The sweep's lookups: parts processing with a stale beat, parts queued without a message.
    index("job_parts_state_heartbeat_idx").on(t.state, t.heartbeatAt),
  ],
);

export type JobPart = typeof jobParts.$inferSelect;

/**
 * A segment of a streaming output, stored under the job's stream prefix (docs/playback.md): the
 * Worker writes each rendition's playlist from these, the unbroken run from segment 0. A segment
 * is recorded once: an encode made again (a part redone elsewhere) never changes one listed.
 */
export const streamSegments = pgTable(
  "stream_segments",
  {
    jobId: uuid("job_id")
      .notNull()
      .references(() => jobs.id, { onDelete: "cascade" }),
    rendition: text("rendition").notNull(),
    index: integer("index").notNull(),
    /** Seconds. */
    duration: doublePrecision("duration").notNull(),
    /** Where it starts on the stream's clock, in seconds (its fMP4 tfdt); null for MPEG-TS, whose playlists need none. */
    start: doublePrecision("start"),
    /** The rendition's RFC 6381 codecs string, read off its first segment: on segment 0, which the master playlist reads. */
    codecs: text("codecs"),
    ...createdAt,
  },
  (t) => [primaryKey({ columns: [t.jobId, t.rendition, t.index] })],
);

export type StreamSegment = typeof streamSegments.$inferSelect;
