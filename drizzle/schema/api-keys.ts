import { index, pgTable, text, uuid } from "drizzle-orm/pg-core";
import { accounts } from "./accounts";
import { createdAt, tstz } from "./columns";

export const apiKeys = pgTable(
  "api_keys",
  {
    id: uuid("id").primaryKey().defaultRandom(),
    accountId: uuid("account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    /** Hex SHA-256 of the whole key; the key itself is never stored. */
    hash: text("hash").notNull().unique(),
    /** What the owner called it in the dashboard; keys made by the admin CLI have none. */
    name: text("name"),
    /** The last four characters, the only part visible after creation. */
    last4: text("last4").notNull(),
    revokedAt: tstz("revoked_at"),
    ...createdAt,
  },
  (t) => [index("api_keys_account_idx").on(t.accountId)],
);

export type ApiKey = typeof apiKeys.$inferSelect;
