import { describe, expect, it, vi } from "vitest";
import { semaphore, singleFlight } from "../../../encoder/concurrency";

const deferred = <T>() => {
  let resolve!: (v: T) => void;
  let reject!: (e: unknown) => void;
  const promise = new Promise<T>((res, rej) => ((resolve = res), (reject = rej)));
  return { promise, resolve, reject };
};

describe("encoder concurrency", () => {
  it("semaphore: never more than the limit at once, and the waiting ones run in turn", async () => {
    const limit = semaphore(2);
    let active = 0;
    let peak = 0;
    const gates = Array.from({ length: 5 }, () => deferred<void>());
    const runs = gates.map((gate) =>
      limit(async () => {
        peak = Math.max(peak, ++active);
        await gate.promise;
        active -= 1;
      }),
    );
    await vi.waitFor(() => expect(active).toBe(2));
    gates.forEach((g) => g.resolve());
    await Promise.all(runs);
    expect(peak).toBe(2);
  });

  it("singleFlight: a second call for a running key shares its result; afterwards it runs anew", async () => {
    const once = singleFlight<string>();
    let calls = 0;
    const gate = deferred<string>();
    const first = once("job-1", () => (calls++, gate.promise));
    const redelivery = once("job-1", async () => (calls++, "second encode"));
    const other = once("job-2", async () => (calls++, "other job"));
    gate.resolve("done");
    expect(await Promise.all([first, redelivery, other])).toEqual(["done", "done", "other job"]);
    expect(calls).toBe(2);
    expect(await once("job-1", async () => (calls++, "again"))).toBe("again");
  });

  it("singleFlight: a failure reaches every waiter and frees the key", async () => {
    const once = singleFlight<string>();
    const gate = deferred<string>();
    const a = once("k", () => gate.promise);
    const b = once("k", () => Promise.resolve("never"));
    gate.reject(new Error("boom"));
    await expect(a).rejects.toThrow("boom");
    await expect(b).rejects.toThrow("boom");
    expect(await once("k", async () => "fresh")).toBe("fresh");
  });
});
