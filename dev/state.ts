import { mkdir, readFile, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

export const PROJECT_ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");
const STATE_FILE = join(PROJECT_ROOT, ".data", "dev-state.json");

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

export async function readDevState(): Promise<DevState | null> {
  try {
    return JSON.parse(await readFile(STATE_FILE, "utf8")) as DevState;
  } catch {
    return null;
  }
}
