/**
 * Campaign: hostile input on GET /presets, where a key is optional: any query string and any
 * headers give the catalogue for the caller's plan (the free view without a key), and any
 * Authorization that is not a live key gives the contract's 401.
 */
import fc from "fast-check";
import { beforeAll, describe, expect, it } from "vitest";
import type { PlanId } from "../../domain/plans";
import { account, seedVictim } from "./accounts";
import { extraHeaders, headerValue, queryString } from "./arbitraries";
import { type Caller, send } from "./client";
import { expectContractBody, expectContractError, presetList } from "./contract";
import { countCase, fuzz } from "./fuzz";

const RUNS = 1000;
const PLANS: PlanId[] = ["free", "pro", "business", "enterprise"];

let callers: Caller[];

beforeAll(async () => {
  await seedVictim();
  callers = await Promise.all(PLANS.map((plan) => account(plan)));
});

describe("campaign: hostile input on GET /presets", () => {
  it("any query string and headers → the caller's catalogue, the free one without a key, 401 for a bad key", async () => {
    const who = fc.oneof(
      fc.record({ kind: fc.constant("key" as const), plan: fc.nat({ max: PLANS.length - 1 }) }),
      fc.record({ kind: fc.constant("none" as const) }),
      // Not blank: a blank one is no credential (the free view, below).
      fc.record({
        kind: fc.constant("forged" as const),
        authorization: headerValue.filter((v) => !/^[\t ]*$/.test(v)),
      }),
    );
    await fuzz(
      fc.tuple(who, queryString, extraHeaders),
      async ([sender, query, headers]) => {
        countCase("GET /presets");
        const caller = sender.kind === "key" ? callers[sender.plan] : undefined;
        const res = await send({
          method: "GET",
          path: `/presets${query}`,
          caller,
          headers: sender.kind === "forged" ? { ...headers, Authorization: sender.authorization } : headers,
        });
        if (sender.kind === "forged") {
          expectContractError(res, { allowed: ["Unauthorized"] });
          return;
        }
        expectContractBody(presetList, res);
        const plan = sender.kind === "key" ? PLANS[sender.plan] : "free";
        expect((res.body as { meta: { userPlan: string } }).meta.userPlan).toBe(plan);
      },
      { runs: RUNS },
    );
  });
});

describe("GET /presets with a blank Authorization", () => {
  it("is the free view: a header that is empty once trimmed carries no key", async () => {
    for (const authorization of ["", " ", "\t "]) {
      const res = await send({ method: "GET", path: "/presets", headers: { Authorization: authorization } });
      expectContractBody(presetList, res);
      expect((res.body as { meta: { userPlan: string } }).meta.userPlan, JSON.stringify(authorization)).toBe("free");
    }
  });
});
