import { timestamp } from "drizzle-orm/pg-core";

/** Every timestamp is stored with its zone and read back as a Date (docs/contract.md §2.2: ISO 8601 UTC). */
export const tstz = (name: string) => timestamp(name, { withTimezone: true, mode: "date", precision: 3 });

export const createdAt = {
  createdAt: tstz("created_at").notNull().defaultNow(),
};
