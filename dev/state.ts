import { mkdir, readFile, writeFile } from "node:fs/promises";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

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

export async function readDevState(): Promise<DevState | null> {
  try {
    return JSON.parse(await readFile(STATE_FILE, "utf8")) as DevState;
  } catch {
    return null;
  }
}
