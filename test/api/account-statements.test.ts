import { randomUUID } from "node:crypto";
import { count, eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { accounts, sessions, users } from "../../drizzle/schema";
import { startSession } from "../../worker/dashboard/auth/session";
import type { AnyDatabase } from "../../worker/services/db";
import { createUserWithAccount, EmailTakenError, findUserByEmail, setPassword } from "../../worker/dashboard/lib/users";
import { openScratchDatabase } from "../support/http-database";

/**
 * The dashboard's account writes are single statements, so they run the same over Neon's HTTP
 * path (the Worker) and node-postgres (the admin CLI), with nothing half done when one fails.
 */
let database: Awaited<ReturnType<typeof openScratchDatabase>>;

beforeAll(async () => {
  database = await openScratchDatabase("vep_accounts");
});

afterAll(() => database?.close());

const accountCount = async () => (await database.direct.select({ n: count() }).from(accounts))[0].n;

describe.each([
  { driver: "Neon over HTTP (the Worker)", db: () => database.db as AnyDatabase },
  { driver: "node-postgres (the admin CLI)", db: () => database.direct as AnyDatabase },
])("account statements through $driver", ({ db }) => {
  it("a new user comes with its account; a taken email creates neither", async () => {
    const email = `u-${randomUUID()}@example.com`;
    const created = await createUserWithAccount(db(), { email, password: "long enough pw", plan: "pro" });
    const [row] = await database.direct
      .select({ plan: accounts.plan, userId: users.id })
      .from(users)
      .innerJoin(accounts, eq(accounts.id, users.accountId))
      .where(eq(users.email, email));
    expect(row).toEqual({ plan: "pro", userId: created.userId });

    const before = await accountCount();
    await expect(
      createUserWithAccount(db(), { email, password: "another password", plan: "free" }),
    ).rejects.toBeInstanceOf(EmailTakenError);
    expect(await accountCount()).toBe(before);
  });

  it("a new password ends every session of the user, in the same statement; an unknown email changes nothing", async () => {
    const email = `p-${randomUUID()}@example.com`;
    const { userId, accountId } = await createUserWithAccount(db(), {
      email,
      password: "long enough pw",
      plan: "free",
    });
    await startSession(database.db, userId);
    await startSession(database.db, userId);
    expect(await setPassword(db(), email, "a new password")).toEqual({ userId, accountId, sessionsEnded: 2 });
    expect((await database.direct.select({ n: count() }).from(sessions).where(eq(sessions.userId, userId)))[0].n).toBe(
      0,
    );
    expect(await setPassword(db(), `nobody-${randomUUID()}@example.com`, "a new password")).toBeNull();
  });

  it("a sign-in's session starts only while the password it checked is still the user's: one set meanwhile wins", async () => {
    const email = `r-${randomUUID()}@example.com`;
    const { userId } = await createUserWithAccount(db(), { email, password: "long enough pw", plan: "free" });
    const checked = (await findUserByEmail(db(), email))!.passwordHash;
    // The operator's `user password` lands while the sign-in is still checking the old one.
    await setPassword(db(), email, "a new password");
    expect(await startSession(database.db, userId, { passwordHash: checked })).toBeNull();
    expect((await database.direct.select({ n: count() }).from(sessions).where(eq(sessions.userId, userId)))[0].n).toBe(
      0,
    );
    const current = (await findUserByEmail(db(), email))!.passwordHash;
    expect(await startSession(database.db, userId, { passwordHash: current })).toMatchObject({
      token: expect.any(String),
    });
  });
});
