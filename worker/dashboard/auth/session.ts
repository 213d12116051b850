import { and, eq, gt } from "drizzle-orm";
import { accounts, sessions, users, type Account } from "../../../drizzle/schema";
import type { Database } from "../../services/db";
import { randomToken, tokenDigest } from "./tokens";

/**
 * Sessions slide: each use pushes the expiry to a week after it (at most once an hour, to
 * spare writes), but never past 30 days after sign-in, when the user signs in again.
 */
const SESSION_IDLE_MS = 7 * 24 * 60 * 60 * 1000;
const SESSION_MAX_MS = 30 * 24 * 60 * 60 * 1000;
const SLIDE_EVERY_MS = 60 * 60 * 1000;

/** Who a request is signed in as: one user and the one account the session belongs to. */
export interface SignedIn {
  sessionId: string;
  userId: string;
  email: string;
  csrfToken: string;
  expiresAt: Date;
  /** The expiry moved on this request, so the cookie must be sent again with it. */
  renewed: boolean;
  account: Account;
}

export async function startSession(db: Database, userId: string, now = new Date()) {
  const token = randomToken();
  const expiresAt = new Date(now.getTime() + SESSION_IDLE_MS);
  await db.insert(sessions).values({
    userId,
    tokenHash: await tokenDigest(token),
    csrfToken: randomToken(),
    expiresAt,
    absoluteExpiresAt: new Date(now.getTime() + SESSION_MAX_MS),
    createdAt: now,
  });
  return { token, expiresAt };
}

/** The live session the token names, its expiry slid forward; null for unknown or expired tokens. */
export async function resumeSession(db: Database, token: string, now = new Date()): Promise<SignedIn | null> {
  const [row] = await db
    .select({ session: sessions, email: users.email, account: accounts })
    .from(sessions)
    .innerJoin(users, eq(users.id, sessions.userId))
    .innerJoin(accounts, eq(accounts.id, users.accountId))
    .where(and(eq(sessions.tokenHash, await tokenDigest(token)), gt(sessions.expiresAt, now)))
    .limit(1);
  if (!row) return null;
  const { session } = row;
  const slid = new Date(Math.min(now.getTime() + SESSION_IDLE_MS, session.absoluteExpiresAt.getTime()));
  const renewed = slid.getTime() - session.expiresAt.getTime() >= SLIDE_EVERY_MS;
  if (renewed) await db.update(sessions).set({ expiresAt: slid }).where(eq(sessions.id, session.id));
  return {
    sessionId: session.id,
    userId: session.userId,
    email: row.email,
    csrfToken: session.csrfToken,
    expiresAt: renewed ? slid : session.expiresAt,
    renewed,
    account: row.account,
  };
}

export async function endSession(db: Database, sessionId: string): Promise<void> {
  await db.delete(sessions).where(eq(sessions.id, sessionId));
}
