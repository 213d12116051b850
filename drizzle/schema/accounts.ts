import { pgTable, text, uuid } from "drizzle-orm/pg-core";
import { PLAN_IDS } from "../../domain/plans";
import { createdAt } from "./columns";

export const accounts = pgTable("accounts", {
  id: uuid("id").primaryKey().defaultRandom(),
  plan: text("plan", { enum: PLAN_IDS }).notNull(),
  webhookUrl: text("webhook_url"),
  /** Standard Webhooks secret (`whsec_…`), shown once when the webhook is set. */
  webhookSecret: text("webhook_secret"),
  ...createdAt,
});

export type Account = typeof accounts.$inferSelect;
export type NewAccount = typeof accounts.$inferInsert;
