import fc from "fast-check";
import { serialize } from "pg-protocol";
import { describe, expect, it } from "vitest";
import { FrontendSession } from "../../../dev/cloud/pg-frontend";

/** Bytes as a client writes them (pg's own serializer), cut into chunks at the given points. */
function chunks(bytes: Buffer, cuts: number[]): Buffer[] {
  const points = [...new Set(cuts.map((c) => c % (bytes.length + 1)))].sort((a, b) => a - b);
  const out: Buffer[] = [];
  let from = 0;
  for (const p of [...points, bytes.length]) {
    if (p > from) out.push(bytes.subarray(from, p));
    from = Math.max(from, p);
  }
  return out;
}

const TERMINATE = serialize.end();

/** Messages of a session: text and binary values that may well contain a Terminate's bytes. */
const message = fc.oneof(
  fc.string().map((text) => serialize.query(text)),
  fc.string().map((text) => serialize.parse({ text })),
  fc
    .array(
      fc.oneof(
        fc.string(),
        fc.uint8Array().map((a) => Buffer.from(a)),
        fc.constant(TERMINATE),
        fc.constant(null),
      ),
    )
    .map((values) => Buffer.concat([serialize.bind({ values }), serialize.execute(), serialize.sync()])),
  fc.constant(serialize.flush()),
);

const startup = fc
  .boolean()
  .map((ssl) =>
    Buffer.concat([
      ...(ssl ? [serialize.requestSsl()] : []),
      serialize.startup({ user: "postgres", database: "postgres" }),
      serialize.password("pw"),
    ]),
  );

describe("FrontendSession: where a client's session ends", () => {
  it("ends at Terminate and not before, however the bytes are cut and whatever the messages carry", () => {
    fc.assert(
      fc.property(
        startup,
        fc.array(message, { maxLength: 8 }),
        fc.array(fc.nat(), { maxLength: 12 }),
        (start, messages, cuts) => {
          const session = new FrontendSession();
          const before = Buffer.concat([start, ...messages]);
          for (const chunk of chunks(before, cuts)) expect(session.push(chunk)).toBe(false);
          const endings = chunks(TERMINATE, cuts).map((chunk) => session.push(chunk));
          expect(endings.at(-1)).toBe(true);
          expect(endings.slice(0, -1)).not.toContain(true);
        },
      ),
      { numRuns: 500 },
    );
  });

  it("a Terminate sent in the same write as the messages before it ends the session", () => {
    const session = new FrontendSession();
    const write = Buffer.concat([serialize.startup({ user: "u" }), serialize.query("select 1"), TERMINATE]);
    expect(session.push(write)).toBe(true);
  });

  it("a CancelRequest is a session of its own, ended once sent", () => {
    expect(new FrontendSession().push(serialize.cancel(1234, 5678))).toBe(true);
  });

  it("after an SSLRequest the server accepted, TLS follows: nothing in it is taken for a Terminate", () => {
    const session = new FrontendSession();
    session.push(serialize.requestSsl());
    const clientHello = Buffer.from([0x16, 0x03, 0x01, 0x00, 0x05, 0x58, 0x00, 0x00, 0x00, 0x04]);
    expect(session.push(Buffer.concat([clientHello, TERMINATE]))).toBe(false);
  });
});
