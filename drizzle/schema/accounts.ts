import { pgTable, text, uuid } from "drizzle-orm/pg-core";
import { createdAt } from "./columns";

export const accounts = pgTable("accounts", {
  id: uuid("id").primaryKey().defaultRandom(),
  plan: text("plan", { enum: ["free", "pro", "business", "enterprise"] }).notNull(),
  webhookUrl: text("webhook_url"),
  /** Standard Webhooks secret (`whsec_…`), shown once when the webhook is set. */
  webhookSecret: text("webhook_secret"),
  ...createdAt,
});

export type Account = typeof accounts.$inferSelect;
export type NewAccount = typeof accounts.$inferInsert;
