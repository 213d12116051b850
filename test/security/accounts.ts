/**
 * Accounts for the campaigns: attackers, and a victim whose jobs sit in every state so each
 * route meets each kind of job it could leak. Everything identifying the victim is registered
 * with the leak scanner, so no response to anyone else may carry it.
 */
import { randomUUID } from "node:crypto";
import { eq } from "drizzle-orm";
import type { EdlDocument } from "../../client/types";
import { jobs } from "../../drizzle/schema";
import type { PlanId } from "../../domain/plans";
import { admin, completeJob, internal, newAccount } from "../api/harness";
import { type Caller, clientAs } from "./client";
import { forbid } from "./leaks";

export async function account(plan: PlanId = "enterprise"): Promise<Caller> {
  return newAccount(plan);
}

export const VICTIM_STATES = ["queued", "processing", "completed", "failed", "cancelled", "legacy", "edl"] as const;
type VictimState = (typeof VICTIM_STATES)[number];

export interface Victim extends Caller {
  marker: string;
  jobs: Record<VictimState, string>;
}

async function create(victim: Caller, marker: string): Promise<string> {
  const res = await clientAs(victim).createJob({
    inputUrl: `https://media.example.com/${marker}.mp4`,
    preset: "mp4_264_720p",
    metadata: { marker },
  });
  if (res.status !== 201) throw new Error(`victim job: ${res.status} ${res.text}`);
  return res.body.id;
}

async function createTimeline(victim: Caller, marker: string): Promise<string> {
  const edl: EdlDocument = {
    version: "1.0",
    timeline: {
      tracks: [
        {
          type: "video",
          clips: [{ id: marker, src: `https://media.example.com/${marker}.mp4`, in: 0, out: 5, startTime: 0 }],
        },
      ],
    },
  };
  const res = await clientAs(victim).createEdlJob({ edl, metadata: { name: marker } });
  if (res.status !== 201) throw new Error(`victim timeline: ${res.status} ${res.text}`);
  return res.body.id;
}

function expectOk(what: string, res: { status: number; body: unknown }) {
  if (res.status !== 200) throw new Error(`${what}: ${res.status} ${JSON.stringify(res.body)}`);
}

/** An account with a webhook, and one job in each state, all carrying a unique marker. */
export async function seedVictim(): Promise<Victim> {
  const marker = `victim-${randomUUID()}`;
  const victim = await account("pro");
  const hook = await admin.setWebhook(victim.accountId, `https://hooks.example.com/${marker}`);
  const ids = await Promise.all(
    VICTIM_STATES.map((state) => (state === "edl" ? createTimeline(victim, marker) : create(victim, marker))),
  );
  const byState = Object.fromEntries(VICTIM_STATES.map((state, i) => [state, ids[i]])) as Record<VictimState, string>;

  expectOk("claim", await internal(`/jobs/${byState.processing}/claim`, { dispatch: 0 }));
  const outputKeys = [
    await completeJob(byState.completed, victim.accountId),
    await completeJob(byState.legacy, victim.accountId),
  ];
  await admin.db.update(jobs).set({ storageLayout: "legacy" }).where(eq(jobs.id, byState.legacy));
  expectOk("claim", await internal(`/jobs/${byState.failed}/claim`, { dispatch: 0 }));
  expectOk(
    "fail",
    await internal(`/jobs/${byState.failed}/fail`, {
      claim: 1,
      errorMessage: `download failed: ${marker}`,
      retryable: false,
    }),
  );
  const cancelled = await clientAs(victim).cancelJob(byState.cancelled);
  if (cancelled.status !== 200) throw new Error(`victim cancel: ${cancelled.status} ${cancelled.text}`);

  const owner = victim.accountId;
  forbid(victim.accountId, "another account's id", owner);
  forbid(victim.apiKey, "another account's API key", owner);
  forbid(marker, "another account's job data", owner);
  forbid(hook.secret, "another account's webhook secret", owner);
  for (const id of ids) forbid(id, "another account's job id", owner);
  for (const key of outputKeys) forbid(key, "another account's storage key", owner);
  return { ...victim, marker, jobs: byState };
}
