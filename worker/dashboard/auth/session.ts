import { and, eq, gt, sql } from "drizzle-orm";
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

/**
 * A new session for the user; with `passwordHash`, only while the user's password is still the
 * one that hash was read as (null otherwise). A sign-in reads the hash, checks the password
 * against it (slow by design), then starts the session: a new password set
 * in between (which ends the user's sessions) must not be followed by one started on the old.
 */
export async function startSession(
  db: Database,
  userId: string,
  { passwordHash, now = new Date() }: { passwordHash?: string; now?: Date } = {},
) {
  const token = randomToken();
  const expiresAt = new Date(now.getTime() + SESSION_IDLE_MS);
  const timestamp = (at: Date) => sql`${at.toISOString()}::timestamptz`;
  const started = await db
    .insert(sessions)
    .select(
      db
        // Every column, in the table's order, as drizzle's insert … select requires.
        .select({
          id: sql`gen_random_uuid()`.as("id"),
          userId: users.id,
          tokenHash: sql`${await tokenDigest(token)}`.as("token_hash"),
          csrfToken: sql`${randomToken()}`.as("csrf_token"),
          expiresAt: timestamp(expiresAt).as("expires_at"),
          absoluteExpiresAt: timestamp(new Date(now.getTime() + SESSION_MAX_MS)).as("absolute_expires_at"),
          createdAt: timestamp(now).as("created_at"),
        })
        .from(users)
        .where(
          and(eq(users.id, userId), passwordHash === undefined ? undefined : eq(users.passwordHash, passwordHash)),
        ),
    )
    .returning({ id: sessions.id });
  return started.length > 0 ? { token, expiresAt } : null;
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
