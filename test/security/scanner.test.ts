/**
 * The leak scanner every campaign response goes through must be able to fail: each kind of leak
 * it looks for, planted in a response, is found; what a response may carry is not.
 */
import { describe, expect, it } from "vitest";
import { stack } from "./client";
import { findLeaks, forbid } from "./leaks";

const ACCOUNT = "11111111-1111-4111-8111-111111111111";
const OTHER = "22222222-2222-4222-8222-222222222222";
const signedLink = (account: string, signature = "&X-Amz-Signature=abc") =>
  `${stack.cloud.s3.endpoint}/${stack.cloud.s3.bucket}/outputs/${account}/job/output.mp4?X-Amz-Expires=14400${signature}`;
const scan = (response: string, request = "", ownAccountId: string | null = ACCOUNT) =>
  findLeaks(response, stack, { ownAccountId: ownAccountId ?? undefined, request });

describe("the leak scanner", () => {
  it("finds stack traces and source locations", () => {
    expect(scan("Error: boom\n    at handler (worker/routes/jobs/get.ts:12:5)")).not.toEqual([]);
    expect(scan('{"message":"failed at Object.parse (index.js:50856:3)"}')).not.toEqual([]);
    expect(scan('{"message":"see /work/node_modules/hono/dist/index.js"}')).not.toEqual([]);
  });

  it("finds internal addresses and secrets", () => {
    expect(scan(`{"message":"connect ECONNREFUSED ${new URL(stack.cloud.qstash.url).host}"}`)).not.toEqual([]);
    expect(scan(`{"message":"${stack.databaseUrl}"}`)).not.toEqual([]);
    expect(scan(`{"x":"${stack.internalSecret}"}`)).not.toEqual([]);
    expect(scan('{"key":"outputs/abc/def/output.mp4"}')).not.toEqual([]);
  });

  it("lets a signed link to the caller's own output through, and nothing else from storage", () => {
    expect(scan(`{"outputUrl":"${signedLink(ACCOUNT)}"}`)).toEqual([]);
    expect(scan(`{"outputUrl":"${signedLink(OTHER)}"}`)).not.toEqual([]);
    expect(scan(`{"outputUrl":"${signedLink(ACCOUNT, "")}"}`)).not.toEqual([]);
    expect(scan(`{"outputUrl":"${signedLink(ACCOUNT)}"}`, "", null)).not.toEqual([]);
  });

  it("lets a response echo what its request sent", () => {
    const address = new URL(stack.cloud.s3.endpoint).host;
    expect(scan(`{"inputUrl":"http://${address}/a.mp4"}`, `{"inputUrl":"http://${address}/a.mp4"}`)).toEqual([]);
    expect(scan('{"message":"Unknown preset \'at x (a.ts:1:2)\'"}', '{"preset":"at x (a.ts:1:2)"}')).toEqual([]);
  });

  it("finds another account's data, but lets its owner see it", () => {
    forbid("marker-of-account-2", "another account's job data", OTHER);
    expect(scan('{"inputUrl":"https://x.test/marker-of-account-2.mp4"}')).not.toEqual([]);
    expect(scan('{"inputUrl":"https://x.test/marker-of-account-2.mp4"}', "", OTHER)).toEqual([]);
  });
});
