import { sql } from "drizzle-orm";
import { bigint, index, integer, pgTable, text, uuid } from "drizzle-orm/pg-core";
import { accounts } from "./accounts";
import { createdAt, tstz } from "./columns";

/**
 * A direct upload (docs/uploads.md): an object the client puts into storage through presigned
 * URLs, then names as a job's source. A row still `pending` past `expires_at` reads `expired`;
 * the sweep stores `expired` once it has aborted the upload in storage, and `deleted` once it has
 * deleted a completed upload's object at `delete_at`.
 */
export const uploads = pgTable(
  "uploads",
  {
    id: uuid("id").primaryKey(),
    accountId: uuid("account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    /** uploads/<accountId>/<id>/source: nothing of the client's filename. */
    key: text("key").notNull(),
    filename: text("filename"),
    contentType: text("content_type"),
    /** Declared at creation; for a single upload created without one, what storage held at completion. */
    size: bigint("size", { mode: "number" }),
    /** The S3 multipart upload's id; null for a single upload. */
    multipartUploadId: text("multipart_upload_id"),
    partSize: integer("part_size"),
    status: text("status", { enum: ["pending", "completed", "expired", "deleted"] })
      .notNull()
      .default("pending"),
    ...createdAt,
    expiresAt: tstz("expires_at").notNull(),
    completedAt: tstz("completed_at"),
    /**
     * When the sweep deletes the object: creation and the plan's retention, fixed at creation.
     * The default is the shortest retention, for rows made before the column.
     */
    deleteAt: tstz("delete_at").notNull().default(sql`now() + interval '7 days'`),
  },
  (t) => [
    index("uploads_account_created_idx").on(t.accountId, t.createdAt.desc()),
    // The sweep's lookup of abandoned uploads: only the pending ones.
    index("uploads_pending_expires_idx").on(t.expiresAt).where(sql`${t.status} = 'pending'`),
    // The sweep's lookup of completed uploads due for deletion.
    index("uploads_completed_delete_idx").on(t.deleteAt).where(sql`${t.status} = 'completed'`),
  ],
);

export type Upload = typeof uploads.$inferSelect;
