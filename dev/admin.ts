/**
 * npm run admin -- <command> …   (npm run admin -- --help lists them; `help <command>` explains one)
 * Prints only JSON on stdout. Reaches DATABASE_URL (and UPSTASH_REDIS_REST_URL/TOKEN) from the
 * environment, or else the stores of the running `npm run dev` (found under DATA_DIR). Exits 1 on
 * a failure, 2 when a change was made but the API's key cache could not be told of it.
 */
import { parseArgs } from "node:util";
import { isPlanId, PLAN_IDS } from "../domain/plans";
import { CacheNotCleared, openAdmin, type Admin } from "./admin/commands";
import { adminConnections, describeError } from "./admin/connections";
import { readHiddenLine } from "./admin/prompt";
import { readDevState } from "./state";

interface Command {
  usage: string;
  summary: string;
  /** Flags the command takes (all strings but the booleans listed). */
  flags?: { strings?: string[]; booleans?: string[] };
  /** How many positional arguments it needs, and at most. */
  positionals: [min: number, max: number];
  run(
    admin: Admin,
    args: { positionals: string[]; flags: Record<string, string | boolean | undefined> },
  ): Promise<unknown>;
}

const PLANS = PLAN_IDS.join("|");

function plan(value: unknown) {
  if (!isPlanId(value)) throw new Error(`plan must be one of ${PLAN_IDS.join(", ")}`);
  return value;
}

/** A password from the command line, or else asked for on the terminal (not echoed) or read from stdin. */
async function password(given: unknown, prompt: string): Promise<string> {
  return typeof given === "string" ? given : readHiddenLine(prompt);
}

const COMMANDS: Record<string, Command> = {
  "account create": {
    usage: `account create --plan <${PLANS}>`,
    summary: "Creates an account with one API key. Prints {accountId, apiKey}; the key is shown only here.",
    flags: { strings: ["plan"] },
    positionals: [0, 0],
    run: (admin, { flags }) => admin.createAccount(plan(flags.plan)),
  },
  "account list": {
    usage: "account list",
    summary: "Every account, newest first: plan, dashboard user's email, active keys, webhook URL.",
    positionals: [0, 0],
    run: (admin) => admin.listAccounts(),
  },
  "account show": {
    usage: "account show <accountId>",
    summary:
      "One account: plan, dashboard user, usage this month against the quota, webhook (URL; never the secret), key counts.",
    positionals: [1, 1],
    run: (admin, { positionals }) => admin.showAccount(positionals[0]),
  },
  "account plan": {
    usage: `account plan <accountId> <${PLANS}>`,
    summary: "Moves the account to another plan; its keys see the new plan at once.",
    positionals: [2, 2],
    run: (admin, { positionals }) => admin.setPlan(positionals[0], plan(positionals[1])),
  },
  "key create": {
    usage: "key create <accountId> [--name <name>] [--legacy]",
    summary:
      "A new API key for the account (--legacy: an sk_ key). Prints {keyId, apiKey}; the key is shown only here.",
    flags: { strings: ["name"], booleans: ["legacy"] },
    positionals: [1, 1],
    run: (admin, { positionals, flags }) =>
      admin.createKey(positionals[0], flags.legacy === true, typeof flags.name === "string" ? flags.name : null),
  },
  "key list": {
    usage: "key list <accountId>",
    summary: "The account's keys, newest first: id, name, last four characters, created and revoked times.",
    positionals: [1, 1],
    run: (admin, { positionals }) => admin.listKeys(positionals[0]),
  },
  "key revoke": {
    usage: "key revoke <apiKey-or-keyId>",
    summary: "Revokes a key; the API refuses it from the next request on.",
    positionals: [1, 1],
    run: (admin, { positionals }) => admin.revokeKey(positionals[0]),
  },
  "webhook set": {
    usage: "webhook set <accountId> <url>",
    summary: "Sets the account's webhook URL with a new whsec_ secret. Prints {webhookUrl, secret}.",
    positionals: [2, 2],
    run: (admin, { positionals }) => admin.setWebhook(positionals[0], positionals[1]),
  },
  "user create": {
    usage: `user create --email <email> --plan <${PLANS}> [--password <password>]`,
    summary:
      "A dashboard user with a new account on the plan. Without --password it is asked for (or read from stdin).",
    flags: { strings: ["email", "plan", "password"] },
    positionals: [0, 0],
    run: async (admin, { flags }) => {
      if (typeof flags.email !== "string") throw new Error("--email is required");
      const chosen = plan(flags.plan);
      return admin.createUser({
        email: flags.email,
        plan: chosen,
        password: await password(flags.password, "Password: "),
      });
    },
  },
  "user password": {
    usage: "user password <email> [<newPassword>]",
    summary:
      "Sets a user's password and signs them out everywhere. Without <newPassword> it is asked for (or read from stdin).",
    positionals: [1, 2],
    run: async (admin, { positionals }) =>
      admin.setUserPassword(positionals[0], await password(positionals[1], "New password: ")),
  },
};

const OVERVIEW = `usage: npm run admin -- <command> [arguments]

${Object.values(COMMANDS)
  .map((c) => `  ${c.usage}`)
  .join("\n")}

Each command prints one JSON document on stdout. \`help <command>\` or \`<command> --help\` explains one.
The database is DATABASE_URL (Redis: UPSTASH_REDIS_REST_URL and _TOKEN), or the running \`npm run dev\`'s.`;

const explain = (c: Command) => `usage: npm run admin -- ${c.usage}\n\n${c.summary}`;

/** Help asked for, as text to print, or null when the arguments are a command to run. */
function helpText(argv: string[]): string | null {
  if (argv.length === 0 || argv[0] === "--help" || argv[0] === "-h") return OVERVIEW;
  if (argv[0] === "help") {
    const command = COMMANDS[argv.slice(1, 3).join(" ")];
    return command ? explain(command) : OVERVIEW;
  }
  const command = COMMANDS[argv.slice(0, 2).join(" ")];
  if (command && (argv.includes("--help") || argv.includes("-h"))) return explain(command);
  return null;
}

function parseCommand(argv: string[]) {
  const command = COMMANDS[argv.slice(0, 2).join(" ")];
  if (!command) throw new Error(`Unknown command: ${argv.slice(0, 2).join(" ")}\n\n${OVERVIEW}`);
  const options = Object.fromEntries([
    ...(command.flags?.strings ?? []).map((name) => [name, { type: "string" as const }]),
    ...(command.flags?.booleans ?? []).map((name) => [name, { type: "boolean" as const }]),
  ]);
  const parsed = (() => {
    try {
      return parseArgs({ args: argv.slice(2), options, allowPositionals: true, strict: true });
    } catch (err) {
      throw new Error(`${(err as Error).message}\n\n${explain(command)}`);
    }
  })();
  const [min, max] = command.positionals;
  if (parsed.positionals.length < min || parsed.positionals.length > max) throw new Error(explain(command));
  return {
    command,
    args: { positionals: parsed.positionals, flags: parsed.values as Record<string, string | boolean | undefined> },
  };
}

const argv = process.argv.slice(2);
const help = helpText(argv);
if (help !== null) {
  console.log(help);
  process.exit(0);
}

let parsed: ReturnType<typeof parseCommand>;
try {
  parsed = parseCommand(argv);
} catch (err) {
  console.error((err as Error).message);
  process.exit(1);
}

const connections = adminConnections(process.env, await readDevState());
if ("problem" in connections) {
  console.error(connections.problem);
  process.exit(1);
}

const admin = openAdmin({ ...connections, quotaLimits: process.env.QUOTA_LIMITS });
try {
  console.log(JSON.stringify(await parsed.command.run(admin, parsed.args)));
} catch (err) {
  // What was done is printed as on success: a new webhook secret is shown nowhere else.
  if (err instanceof CacheNotCleared) console.log(JSON.stringify(err.done));
  console.error(describeError(err));
  process.exitCode = err instanceof CacheNotCleared ? 2 : 1;
} finally {
  await admin.close();
}
