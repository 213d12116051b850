/**
 * The vep package (packages/vep) as a user gets it: packed by npm (its prepack builds it),
 * installed from the tarball into an empty project with npm offline, since it bundles all it
 * runs; its CLI run with npx, and its client imported by a TypeScript module that is type-checked
 * against the shipped declarations, then run.
 */
import { randomBytes } from "node:crypto";
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { Webhook } from "standardwebhooks";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EXIT } from "../../cli/exit-codes";
import type { ErrorKind, PresetCatalogue } from "../../client";
import { freePort } from "../../dev/cloud/free-port";
import { type CliRun, runCommand, vepEnv } from "../support/cli";
import { stack } from "./harness";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));

let work: string;
let project: string;

/** Every npm and npx here offline: what the package needs must be in its tarball. */
const offline = (env: NodeJS.ProcessEnv = process.env) => ({ ...env, npm_config_offline: "true" });

async function succeeded<Json>(run: Promise<CliRun<Json>>): Promise<CliRun<Json>> {
  const done = await run;
  expect(done.code, done.stderr).toBe(0);
  return done;
}

beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), "vep-package-"));
  project = join(work, "project");
  await succeeded(runCommand("npm", ["pack", "--pack-destination", work], { cwd: join(ROOT, "packages/vep") }));
  const tarball = (await readdir(work)).find((name) => name.endsWith(".tgz"));
  await mkdir(project);
  // A package.json of its own, so that npm installs here rather than in a parent that has one.
  await writeFile(join(project, "package.json"), JSON.stringify({ name: "empty-project", private: true }));
  await succeeded(
    runCommand("npm", ["install", "--no-audit", "--no-fund", join(work, tarball ?? "no tarball")], {
      cwd: project,
      env: offline(),
    }),
  );
});

afterAll(() => rm(work, { recursive: true, force: true }));

const npxVep = <Json = unknown>(args: string[], api: string, key?: string) =>
  runCommand<Json>("npx", ["vep", ...args], { cwd: project, env: offline(vepEnv({ api, key })) });

describe("the vep package, installed from its tarball into an empty project", () => {
  it("brings nothing but itself: no dependency to install", async () => {
    expect((await readdir(join(project, "node_modules"))).filter((name) => !name.startsWith("."))).toEqual(["vep"]);
    const manifest = JSON.parse(await readFile(join(project, "node_modules/vep/package.json"), "utf8"));
    expect(manifest.dependencies).toBeUndefined();
  });

  it("npx vep: its help, the presets from the service, and exit 10 when the service cannot be reached", async () => {
    const unreachable = `http://127.0.0.1:${await freePort()}`;
    const help = await succeeded(npxVep(["--help"], unreachable));
    expect(help.stdout).toMatch(/^Usage: vep \[options\] \[command\]/);
    expect(help.stdout).toMatch(/encode \[options\] <source>/);

    const presets = await succeeded(npxVep<PresetCatalogue>(["--json", "presets"], stack.apiUrl));
    expect(presets.json.meta).toMatchObject({ userPlan: "free", totalPresets: 23 });

    const nowhere = await npxVep<{ error: { kind: ErrorKind; retryable: boolean } }>(
      ["--json", "jobs", "list"],
      unreachable,
      "spk_test",
    );
    expect(nowhere.code).toBe(EXIT.unavailable);
    expect(nowhere.json.error).toMatchObject({ kind: "network", retryable: true });
  });

  it("its client, imported by a module type-checked against the shipped declarations, then run", async () => {
    const secret = `whsec_${randomBytes(24).toString("base64")}`;
    const body = JSON.stringify({
      event: "job.completed",
      jobId: "5f0c6d1e-1b2a-4c3d-8e9f-0a1b2c3d4e5f",
      status: "completed",
    });
    const id = "msg_package_test";
    const sentAt = new Date();
    const headers = {
      "webhook-id": id,
      "webhook-timestamp": String(Math.floor(sentAt.getTime() / 1000)),
      "webhook-signature": new Webhook(secret).sign(id, sentAt, body),
    };
    await writeFile(
      join(project, "check.mts"),
      `import { ApiError, createVepClient, verifyWebhook, WebhookVerificationError, type PresetCatalogue, type WebhookEvent } from "vep";

const body = ${JSON.stringify(body)};
const headers = ${JSON.stringify(headers)};
const secret = ${JSON.stringify(secret)};
const client = createVepClient({ baseUrl: ${JSON.stringify(stack.apiUrl)} });
const catalogue: PresetCatalogue = await client.listPresets();
const refused = await client.listJobs().then(
  () => "listed without a key",
  (err: unknown) => (err instanceof ApiError ? \`\${err.kind} \${err.status}\` : String(err)),
);
const event: WebhookEvent = verifyWebhook(body, headers, secret);
let forged = "accepted";
try {
  verifyWebhook(body.replace("completed", "failed"), headers, secret);
} catch (err) {
  forged = err instanceof WebhookVerificationError ? "refused" : String(err);
}
// @ts-expect-error: a job needs a preset; were the declarations missing or loose, this line would be no error
export const withoutPreset = () => client.createJob({ inputUrl: "https://media.example.com/source.mp4" });
console.log(JSON.stringify({ presets: catalogue.meta.totalPresets, refused, event: event.status, forged }));
`,
    );
    // As a project resolving packages as Node does; skipLibCheck off, so the declarations are checked too.
    await writeFile(
      join(project, "tsconfig.json"),
      JSON.stringify({
        compilerOptions: {
          strict: true,
          module: "nodenext",
          moduleResolution: "nodenext",
          target: "es2022",
          lib: ["es2022", "dom"],
          types: [],
          skipLibCheck: false,
        },
        files: ["check.mts"],
      }),
    );
    const tsc = join(ROOT, "node_modules/typescript/bin/tsc");
    const checked = await runCommand(process.execPath, [tsc, "-p", project], { cwd: project });
    expect(checked.code, checked.stdout).toBe(0);
    const ran = await succeeded(runCommand(process.execPath, [join(project, "check.mjs")], { cwd: project }));
    expect(JSON.parse(ran.stdout)).toEqual({
      presets: 23,
      refused: "unauthorized 401",
      event: "completed",
      forged: "refused",
    });
  });
});
