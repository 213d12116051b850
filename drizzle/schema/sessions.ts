import { index, pgTable, text, uuid } from "drizzle-orm/pg-core";
import { createdAt, tstz } from "./columns";
import { users } from "./users";

/** Dashboard sign-ins. The cookie carries the token; only its SHA-256 is stored. */
export const sessions = pgTable(
  "sessions",
  {
    id: uuid("id").primaryKey().defaultRandom(),
    userId: uuid("user_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    /** Hex SHA-256 of the session token. */
    tokenHash: text("token_hash").notNull().unique(),
    /** The synchronizer token every form of this session must carry back. */
    csrfToken: text("csrf_token").notNull(),
    /** Slides forward with use (see worker/dashboard/auth/session.ts), never past `absoluteExpiresAt`. */
    expiresAt: tstz("expires_at").notNull(),
    absoluteExpiresAt: tstz("absolute_expires_at").notNull(),
    ...createdAt,
  },
  (t) => [index("sessions_user_idx").on(t.userId)],
);
