/**
 * Waits for one of `limit` slots: work beyond it waits here rather than starting at once. A slot
 * that frees goes straight to the first waiter, so a call arriving before that waiter resumes
 * cannot take it as well.
 */
export function semaphore(limit: number) {
  let active = 0;
  const waiting: (() => void)[] = [];
  return async <T>(fn: () => Promise<T>): Promise<T> => {
    if (active >= limit) await new Promise<void>((resolve) => waiting.push(resolve));
    else active += 1;
    try {
      return await fn();
    } finally {
      const next = waiting.shift();
      if (next) next();
      else active -= 1;
    }
  };
}

/**
 * One piece of work per key at a time. A call for a key whose work is running under the same
 * `id` shares its result instead of running again; a call under another id waits for that work
 * to end, then runs its own.
 */
export function flightsByKey<T>() {
  const running = new Map<string, { id: string | undefined; result: Promise<T> }>();
  return async (key: string, id: string | undefined, fn: () => Promise<T>): Promise<T> => {
    for (let current = running.get(key); current; current = running.get(key)) {
      if (current.id === id) return current.result;
      await current.result.catch(() => undefined);
    }
    const entry = { id } as { id: string | undefined; result: Promise<T> };
    running.set(key, entry);
    // Settles only once the key is free again, so a call that waited on it finds it free.
    entry.result = fn().finally(() => {
      if (running.get(key) === entry) running.delete(key);
    });
    return entry.result;
  };
}
