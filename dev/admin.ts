/**
 * npm run admin -- account create --plan <plan>
 *                  key create <accountId> [--legacy]
 *                  key revoke <apiKey-or-keyId>
 *                  webhook set <accountId> <url>
 *                  account plan <accountId> <plan>
 * Prints only JSON on stdout. Reaches DATABASE_URL (and UPSTASH_REDIS_REST_URL/TOKEN) from the
 * environment, or else the stores of the running `npm run dev`.
 */
import { isPlanId } from "../domain/plans";
import { openAdmin, type Admin } from "./admin/commands";
import { readDevState } from "./state";

const USAGE = `usage:
  account create --plan <free|pro|business|enterprise>
  account plan <accountId> <free|pro|business|enterprise>
  key create <accountId> [--legacy]
  key revoke <apiKey-or-keyId>
  webhook set <accountId> <url>`;

function flag(args: string[], name: string): string | undefined {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : undefined;
}

function plan(value: string | undefined) {
  if (!isPlanId(value)) throw new Error(`plan must be one of free, pro, business, enterprise`);
  return value;
}

async function run(admin: Admin, args: string[]): Promise<unknown> {
  const [noun, verb, ...rest] = args;
  switch (`${noun} ${verb}`) {
    case "account create":
      return admin.createAccount(plan(flag(rest, "--plan")));
    case "account plan":
      return admin.setPlan(rest[0], plan(rest[1]));
    case "key create":
      if (!rest[0]) break;
      return admin.createKey(rest[0], rest.includes("--legacy"));
    case "key revoke":
      if (!rest[0]) break;
      return admin.revokeKey(rest[0]);
    case "webhook set":
      if (!rest[0] || !rest[1]) break;
      return admin.setWebhook(rest[0], rest[1]);
  }
  throw new Error(USAGE);
}

const dev = await readDevState();
const databaseUrl = process.env.DATABASE_URL ?? dev?.databaseUrl;
if (!databaseUrl) {
  console.error("No database: set DATABASE_URL, or start `npm run dev` first.");
  process.exit(1);
}
const redis = process.env.UPSTASH_REDIS_REST_URL
  ? { url: process.env.UPSTASH_REDIS_REST_URL, token: process.env.UPSTASH_REDIS_REST_TOKEN ?? "" }
  : dev?.redis;

const admin = openAdmin({ databaseUrl, redis });
try {
  console.log(JSON.stringify(await run(admin, process.argv.slice(2))));
} catch (err) {
  console.error(err instanceof Error ? err.message : String(err));
  process.exitCode = 1;
} finally {
  await admin.close();
}
