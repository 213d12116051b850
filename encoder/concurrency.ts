/** Waits for one of `limit` slots: work beyond it waits here rather than starting at once. */
export function semaphore(limit: number) {
  let active = 0;
  const waiting: (() => void)[] = [];
  return async <T>(fn: () => Promise<T>): Promise<T> => {
    if (active >= limit) await new Promise<void>((resolve) => waiting.push(resolve));
    active += 1;
    try {
      return await fn();
    } finally {
      active -= 1;
      waiting.shift()?.();
    }
  };
}

/** Calls for a key while an earlier one is still running share its result instead of running again. */
export function singleFlight<T>() {
  const running = new Map<string, Promise<T>>();
  return (key: string, fn: () => Promise<T>): Promise<T> => {
    const current = running.get(key);
    if (current) return current;
    const started = fn().finally(() => running.delete(key));
    running.set(key, started);
    return started;
  };
}
