import { eq } from "drizzle-orm";
import { z } from "zod";
import { accounts, sessions, users } from "../../../drizzle/schema";
import type { PlanId } from "../../../domain/plans";
import { hashPassword, PASSWORD_MAX_LENGTH, PASSWORD_MIN_LENGTH } from "../auth/password";
import type { AnyDatabase } from "./database";

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

/** A new account on `plan` with its one user. Throws EmailTakenError (and creates nothing) when the address is in use. */
export async function createUserWithAccount(db: AnyDatabase, input: { email: string; password: string; plan: PlanId }) {
  return db.transaction(async (tx) => {
    const [account] = await tx.insert(accounts).values({ plan: input.plan }).returning({ id: accounts.id });
    // Throwing rolls the account back with it.
    const user = await addUser(tx, { accountId: account.id, email: input.email, password: input.password });
    return { ...user, plan: input.plan };
  });
}

/** Sets a new password and ends every session of the user: whoever knew the old one is signed out. */
export async function setPassword(db: AnyDatabase, email: string, password: string) {
  const passwordHash = await hashPassword(password);
  return db.transaction(async (tx) => {
    const [user] = await tx.update(users).set({ passwordHash }).where(eq(users.email, email)).returning({ id: users.id, accountId: users.accountId });
    if (!user) return null;
    const ended = await tx.delete(sessions).where(eq(sessions.userId, user.id)).returning({ id: sessions.id });
    return { userId: user.id, accountId: user.accountId, sessionsEnded: ended.length };
  });
}

export async function findUserByEmail(db: AnyDatabase, email: string) {
  const [user] = await db.select().from(users).where(eq(users.email, email)).limit(1);
  return user;
}
