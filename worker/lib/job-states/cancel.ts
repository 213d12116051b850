import type { Database } from "../../services/db";
import { move } from "./move";

/**
 * The client's cancel (docs/contract.md §4.3, rule 2: marked cancelled before its message is
 * deleted). The caller's job only: another account's job is as unknown as a missing one.
 */
export function cancel(db: Database, target: { id: string; accountId: string }, now = new Date()) {
  return move(db, "cancel", target, { cancelledAt: now });
}
