import { eq, inArray, sql } from "drizzle-orm";
import { z } from "zod";
import { accounts, sessions, users } from "../../../drizzle/schema";
import type { PlanId } from "../../../domain/plans";
import { hashPassword, PASSWORD_MAX_LENGTH, PASSWORD_MIN_LENGTH } from "../auth/password";
import type { AnyDatabase } from "../../services/db";

/** Trimmed and lower-cased: one address is one user however it is typed. */
export const emailSchema = z
  .string()
  .trim()
  .toLowerCase()
  .pipe(z.email({ message: "Enter a valid email address." }).max(254, { message: "That email address is too long." }));

export const passwordSchema = z
  .string()
  .min(PASSWORD_MIN_LENGTH, { message: `Use at least ${PASSWORD_MIN_LENGTH} characters.` })
  .max(PASSWORD_MAX_LENGTH, { message: `Use at most ${PASSWORD_MAX_LENGTH} characters.` });

export class EmailTakenError extends Error {
  constructor(email: string) {
    super(`A user with the email ${email} already exists.`);
  }
}

/** The user of an existing account. Throws EmailTakenError when the address is in use. */
export async function addUser(db: AnyDatabase, input: { accountId: string; email: string; password: string }) {
  const passwordHash = await hashPassword(input.password);
  const [user] = await db
    .insert(users)
    .values({ accountId: input.accountId, email: input.email, passwordHash })
    .onConflictDoNothing({ target: users.email })
    .returning({ id: users.id });
  if (!user) throw new EmailTakenError(input.email);
  return { accountId: input.accountId, userId: user.id, email: input.email };
}

/** The constraint a second user with the same email breaks (drizzle's name for `users.email`'s unique). */
const EMAIL_UNIQUE = "users_email_unique";

/** Whether `err`, or an error down its chain of causes (drizzle wraps the driver's), is Postgres refusing a duplicate under `constraint`. */
function isUniqueViolation(err: unknown, constraint: string): boolean {
  for (let e: unknown = err; e instanceof Error; e = e.cause) {
    const fields = e as Error & { code?: string; constraint?: string };
    if (fields.code === "23505" && fields.constraint === constraint) return true;
  }
  return false;
}

/**
 * A new account on `plan` with its one user, in one statement (the account inserted in a WITH
 * clause), so it needs no interactive transaction and runs the same over Neon's HTTP path and
 * node-postgres. Throws EmailTakenError, and creates nothing, when the address is in use.
 */
export async function createUserWithAccount(db: AnyDatabase, input: { email: string; password: string; plan: PlanId }) {
  const passwordHash = await hashPassword(input.password);
  const accountId = crypto.randomUUID();
  const account = db
    .$with("account")
    .as(db.insert(accounts).values({ id: accountId, plan: input.plan }).returning({ id: accounts.id }));
  try {
    const [user] = await db
      .with(account)
      .insert(users)
      .values({ accountId, email: input.email, passwordHash })
      .returning({ id: users.id });
    return { accountId, userId: user.id, email: input.email, plan: input.plan };
  } catch (err) {
    // The statement failed as a whole: the account went with it.
    if (isUniqueViolation(err, EMAIL_UNIQUE)) throw new EmailTakenError(input.email);
    throw err;
  }
}

/** Sets a new password and ends every session of the user, in one statement: whoever knew the old one is signed out. */
export async function setPassword(db: AnyDatabase, email: string, password: string) {
  const passwordHash = await hashPassword(password);
  const changed = db
    .$with("changed")
    .as(
      db
        .update(users)
        .set({ passwordHash })
        .where(eq(users.email, email))
        .returning({ id: users.id, accountId: users.accountId }),
    );
  const ended = db.$with("ended").as(
    db
      .delete(sessions)
      .where(inArray(sessions.userId, db.select({ id: changed.id }).from(changed)))
      .returning({ id: sessions.id }),
  );
  const [user] = await db
    .with(changed, ended)
    .select({
      userId: changed.id,
      accountId: changed.accountId,
      sessionsEnded: sql<number>`(select count(*) from ${ended})`.mapWith(Number),
    })
    .from(changed);
  return user ?? null;
}

export async function findUserByEmail(db: AnyDatabase, email: string) {
  const [user] = await db.select().from(users).where(eq(users.email, email)).limit(1);
  return user;
}
