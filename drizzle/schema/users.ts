import { pgTable, text, uuid } from "drizzle-orm/pg-core";
import { accounts } from "./accounts";
import { createdAt } from "./columns";

/** A person who signs in to the dashboard; each user holds exactly one account. */
export const users = pgTable("users", {
  id: uuid("id").primaryKey().defaultRandom(),
  accountId: uuid("account_id")
    .notNull()
    .unique()
    .references(() => accounts.id, { onDelete: "cascade" }),
  /** Trimmed and lower-cased, so one address is one user whatever case it is typed in. */
  email: text("email").notNull().unique(),
  /** `pbkdf2-sha256$<iterations>$<salt>$<hash>`, salt and hash in base64 (see worker/dashboard/auth/password.ts). */
  passwordHash: text("password_hash").notNull(),
  ...createdAt,
});
