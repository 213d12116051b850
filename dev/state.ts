import { mkdir, readFile, rm, stat, writeFile } from "node:fs/promises";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { liveHolder } from "./cloud/data-dir-lock";

export const PROJECT_ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");
/** Where `npm run dev` keeps everything it makes: DATA_DIR, or `.data/` in the checkout. */
export const DATA_DIR = process.env.DATA_DIR ? resolve(process.env.DATA_DIR) : join(PROJECT_ROOT, ".data");
const STATE_FILE = join(DATA_DIR, "dev-state.json");

/** What `npm run dev` publishes so `npm run admin` can reach the running service's stores. */
export interface DevState {
  databaseUrl: string;
  redis: { url: string; token: string };
  apiUrl: string;
}

export async function writeDevState(state: DevState): Promise<void> {
  await mkdir(dirname(STATE_FILE), { recursive: true });
  await writeFile(STATE_FILE, JSON.stringify(state, null, 2));
}

/** At a clean stop: what it names is gone. */
export async function removeDevState(): Promise<void> {
  await rm(STATE_FILE, { force: true });
}

/**
 * The last state `npm run dev` published under DATA_DIR, when it was written, and whether that
 * run still holds DATA_DIR: one killed outright (kill -9) leaves its state behind.
 */
export async function readDevState(): Promise<{ state: DevState; writtenAt: Date; running: boolean } | null> {
  try {
    const [text, info] = await Promise.all([readFile(STATE_FILE, "utf8"), stat(STATE_FILE)]);
    return {
      state: JSON.parse(text) as DevState,
      writtenAt: info.mtime,
      running: (await liveHolder(DATA_DIR)) !== null,
    };
  } catch {
    return null;
  }
}
