import { describe, expect, it } from "vitest";
import { adminConnections, describeError } from "../../../dev/admin/connections";

const state = {
  databaseUrl: "postgres://dev@127.0.0.1:5/dev",
  redis: { url: "http://127.0.0.1:6", token: "t" },
  apiUrl: "http://127.0.0.1:8787",
};
const writtenAt = new Date("2026-01-02T03:04:05Z");

describe("npm run admin's stores", () => {
  it("are the running npm run dev's, Redis included, when DATABASE_URL is not set", () => {
    expect(adminConnections({}, { state, writtenAt, running: true })).toEqual({
      databaseUrl: state.databaseUrl,
      redis: state.redis,
    });
  });

  it("are not a stopped run's: its state is told as stale", () => {
    expect(adminConnections({}, { state, writtenAt, running: false })).toEqual({
      problem:
        "npm run dev is not running (its last state is from 2026-01-02T03:04:05.000Z): start it, or set DATABASE_URL.",
    });
    expect(adminConnections({}, null)).toEqual({ problem: expect.stringMatching(/^No database: set DATABASE_URL/) });
  });

  it("take the run's Redis with DATABASE_URL only when that is the run's own database", () => {
    expect(adminConnections({ DATABASE_URL: state.databaseUrl }, { state, writtenAt, running: true })).toEqual({
      databaseUrl: state.databaseUrl,
      redis: state.redis,
    });
    expect(adminConnections({ DATABASE_URL: "postgres://other" }, { state, writtenAt, running: true })).toEqual({
      databaseUrl: "postgres://other",
      redis: undefined,
    });
    expect(adminConnections({ DATABASE_URL: state.databaseUrl }, { state, writtenAt, running: false })).toEqual({
      databaseUrl: state.databaseUrl,
      redis: undefined,
    });
    const upstash = {
      DATABASE_URL: "postgres://other",
      UPSTASH_REDIS_REST_URL: "https://r",
      UPSTASH_REDIS_REST_TOKEN: "k",
    };
    expect(adminConnections(upstash, { state, writtenAt, running: true })).toEqual({
      databaseUrl: "postgres://other",
      redis: { url: "https://r", token: "k" },
    });
  });
});

describe("admin's one-line failure", () => {
  it("follows the causes, each by its first line: a failed query's parameters stay out", () => {
    const refused = new AggregateError([
      new Error("connect ECONNREFUSED ::1:5432"),
      new Error("connect ECONNREFUSED 127.0.0.1:5432"),
    ]);
    const query = new Error('Failed query: select "id" from "api_keys" where "hash" = $1\nparams: the-hash', {
      cause: refused,
    });
    expect(describeError(query)).toBe(
      'Failed query: select "id" from "api_keys" where "hash" = $1: connect ECONNREFUSED ::1:5432; connect ECONNREFUSED 127.0.0.1:5432',
    );
    expect(describeError("plain")).toBe("plain");
  });
});
