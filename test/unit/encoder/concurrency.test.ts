import { describe, expect, it, vi } from "vitest";
import { flightsByKey, semaphore } from "../../../encoder/concurrency";
import { microtasksDrained } from "../../support/barriers";

const deferred = <T>() => {
  let resolve!: (v: T) => void;
  let reject!: (e: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
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
    for (const g of gates) g.resolve();
    await Promise.all(runs);
    expect(peak).toBe(2);
  });

  it("semaphore: a call that arrives as a slot frees, before the waiter resumes, waits: never more than the limit", async () => {
    for (let delay = 0; delay < 6; delay++) {
      const limit = semaphore(2);
      let active = 0;
      let peak = 0;
      const gates: (() => void)[] = [];
      const job = () =>
        limit(async () => {
          peak = Math.max(peak, ++active);
          await new Promise<void>((r) => gates.push(r));
          active--;
        });
      const runs = [job(), job(), job()];
      await vi.waitFor(() => expect(gates).toHaveLength(2));
      gates[0]();
      // The new call lands `delay` microtasks after the release.
      let landed: Promise<unknown> = Promise.resolve();
      for (let i = 0; i < delay; i++) landed = landed.then(() => undefined);
      await landed.then(() => runs.push(job()));
      // The waiter takes the freed slot; once every reaction of the release has run, the new call has had its chance too.
      await vi.waitFor(() => expect(gates).toHaveLength(3));
      await microtasksDrained();
      expect(peak, `a call ${delay} microtasks after the release`).toBe(2);
      // Let every job finish: each opened gate frees a slot for the next waiter.
      let settled = false;
      const all = Promise.all(runs).then(() => (settled = true));
      while (!settled) {
        for (const open of gates) open();
        await microtasksDrained();
      }
      await all;
    }
  });

  it("flightsByKey: a call under the running work's id shares its result; afterwards it runs anew", async () => {
    const flights = flightsByKey<string>();
    let calls = 0;
    const gate = deferred<string>();
    const first = flights("job-1", "msg-a", () => {
      calls++;
      return gate.promise;
    });
    const redelivery = flights("job-1", "msg-a", async () => {
      calls++;
      return "second encode";
    });
    const other = flights("job-2", "msg-c", async () => {
      calls++;
      return "other job";
    });
    gate.resolve("done");
    expect(await Promise.all([first, redelivery, other])).toEqual(["done", "done", "other job"]);
    expect(calls).toBe(2);
    expect(
      await flights("job-1", "msg-a", async () => {
        calls++;
        return "again";
      }),
    ).toBe("again");
  });

  it("flightsByKey: a call under another id waits for the running work to end, then runs its own, one at a time", async () => {
    const flights = flightsByKey<string>();
    const order: string[] = [];
    const gate = deferred<string>();
    const later = deferred<string>();
    const first = flights("job-1", "msg-a", async () => {
      order.push("a starts");
      await gate.promise;
      order.push("a ends");
      return "a";
    });
    const second = flights("job-1", "msg-b", async () => {
      order.push("b starts");
      await later.promise;
      order.push("b ends");
      return "b";
    });
    const third = flights("job-1", "msg-c", async () => {
      order.push("c starts");
      return "c";
    });
    await microtasksDrained();
    expect(order).toEqual(["a starts"]);
    gate.resolve("a");
    await vi.waitFor(() => expect(order).toEqual(["a starts", "a ends", "b starts"]));
    await microtasksDrained();
    expect(order).toEqual(["a starts", "a ends", "b starts"]);
    later.resolve("b");
    expect(await Promise.all([first, second, third])).toEqual(["a", "b", "c"]);
    expect(order).toEqual(["a starts", "a ends", "b starts", "b ends", "c starts"]);
  });

  it("flightsByKey: a failure reaches every call that shares the work and frees the key", async () => {
    const flights = flightsByKey<string>();
    const gate = deferred<string>();
    const a = flights("k", "m", () => gate.promise);
    const b = flights("k", "m", () => Promise.resolve("never"));
    const c = flights("k", "other", async () => "after the failure");
    gate.reject(new Error("boom"));
    await expect(a).rejects.toThrow("boom");
    await expect(b).rejects.toThrow("boom");
    expect(await c).toBe("after the failure");
    expect(await flights("k", "m", async () => "fresh")).toBe("fresh");
  });
});
