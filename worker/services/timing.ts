import { AsyncLocalStorage } from "node:async_hooks";

/** The kinds of sub-request a request can make, as they are named in its Server-Timing header. */
export type SubrequestKind =
  | "db"
  | "cache"
  | "storage-head"
  | "storage-list"
  | "storage-delete"
  | "storage-read"
  | "storage-list-parts"
  | "storage-multipart"
  | "sign"
  | "queue"
  | "pool";

interface Tally {
  ms: number;
  count: number;
}

/** What one request spent waiting on each kind of sub-request. */
export class SubrequestTimings {
  private readonly tallies = new Map<SubrequestKind, Tally>();

  add(kind: SubrequestKind, ms: number) {
    const tally = this.tallies.get(kind) ?? { ms: 0, count: 0 };
    tally.ms += ms;
    tally.count += 1;
    this.tallies.set(kind, tally);
  }

  entries(): [SubrequestKind, Tally][] {
    return [...this.tallies];
  }
}

/**
 * The request a sub-request belongs to. The Neon driver only offers a global fetch hook, so the
 * request is found through async context rather than passed down; the other clients use it too,
 * so every sub-request is counted the same way.
 */
const current = new AsyncLocalStorage<SubrequestTimings>();

export function collectTimings<T>(timings: SubrequestTimings, work: () => Promise<T>): Promise<T> {
  return current.run(timings, work);
}

/**
 * Runs one sub-request and adds its duration to the current request's tally (outside a request,
 * such as in the cron sweep, it just runs). Workers advance the clock only across I/O, so what
 * this measures is the wait for the other side, not the Worker's own CPU.
 */
export async function measured<T>(kind: SubrequestKind, work: () => Promise<T>): Promise<T> {
  const timings = current.getStore();
  if (!timings) return work();
  const start = performance.now();
  try {
    return await work();
  } finally {
    timings.add(kind, performance.now() - start);
  }
}
