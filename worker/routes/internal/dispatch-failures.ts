import { Hono } from "hono";
import { z } from "zod";
import type { AppEnv } from "../../context";
import { ApiError } from "../../errors";
import { settleLostMessage, type LostMessage } from "../../lib/lost-messages";
import { verifyQStash } from "./verify";

/** What a job's message carries (worker/services/queue.ts): a part's names the part, a join's says so. */
const dispatchBody = z.object({ jobId: z.uuid(), part: z.number().int().min(0).optional() });

/**
 * The fields of QStash's failure-callback body this route reads: the message given up on, its
 * body (base64), and the status of its last delivery (0 when that got no answer).
 */
const failureReport = z.object({
  sourceMessageId: z.string().min(1),
  sourceBody: z.base64(),
  status: z.number().int().min(0).default(0),
});

const decodeBase64 = (text: string) => new TextDecoder().decode(Uint8Array.from(atob(text), (ch) => ch.charCodeAt(0)));

function parseReport(raw: string): LostMessage | null {
  try {
    const report = failureReport.parse(JSON.parse(raw));
    const { jobId, part } = dispatchBody.parse(JSON.parse(decodeBase64(report.sourceBody)));
    return { jobId, part, messageId: report.sourceMessageId, lastStatus: report.status };
  } catch {
    return null;
  }
}

/**
 * QStash's failure callback for job messages (`failureCallback` in publishJob): a message that
 * ran out of deliveries. The job is dispatched again or failed (lib/lost-messages.ts); a report
 * that moves nothing (delivered twice, or the job moved on) is answered 200 all the same.
 */
export const dispatchFailures = new Hono<AppEnv>().post("/", verifyQStash, async (c) => {
  const lost = parseReport(await c.req.text());
  // A signed report that can never be acted on: QStash is told not to retry it.
  if (!lost) throw ApiError.malformedDelivery("Expected QStash's failure-callback body for a job message");
  return c.json({ jobId: lost.jobId, outcome: await settleLostMessage(c.get("services"), lost) });
});
