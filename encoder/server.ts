import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { Receiver } from "@upstash/qstash";
import { z } from "zod";
import { ENCODER_DELIVERY_PATH } from "../domain/jobs";
import { MAX_PARTS } from "../domain/split";
import { flightsByKey, semaphore } from "./concurrency";
import { describeError } from "./crash-guard";
import { type Delivery, type DeliveryResult, flightKey, type PipelineDeps, processDelivery } from "./jobs/pipeline";
import { formatStage } from "./jobs/stage-log";

/**
 * `dispatch`: which of the job's dispatches the message is (worker/services/queue.ts); only the
 * current one's may claim it. Nothing else of the delivery is taken on trust: the headers QStash
 * adds (`Upstash-Retried` among them) are not covered by its signature, so the attempt at the
 * source comes from the Worker's record, in the claim's answer.
 */
const deliveryBody = z
  .object({
    jobId: z.string().uuid(),
    dispatch: z.number().int().min(0),
    /** A split job's part (the audio's task after the last), or its join (docs/scaling.md); neither: the job itself. */
    part: z.number().int().min(0).max(MAX_PARTS).optional(),
    join: z.literal(true).optional(),
  })
  .refine((body) => body.part === undefined || body.join === undefined)
  .transform(({ jobId, dispatch, part, join }): Delivery => {
    if (part !== undefined) return { jobId, dispatch, part };
    return join ? { jobId, dispatch, join } : { jobId, dispatch };
  });

/** The job and the dispatch a verified delivery stands for; null for a body that can never be processed. */
export function parseDelivery(raw: string): Delivery | null {
  try {
    return deliveryBody.parse(JSON.parse(raw));
  } catch {
    return null;
  }
}

const BODY_DEADLINE_MS = 10_000;

/**
 * QStash's deliveries are a few hundred bytes. A body still arriving after `deadlineMs` is a
 * client holding the connection (a byte every few seconds) before any signature is checked:
 * the connection is closed. Node's own requestTimeout is off (a delivery's answer waits for its
 * encode), and headersTimeout ends with the headers.
 */
async function readBody(req: IncomingMessage, deadlineMs: number, limit = 64 * 1024): Promise<string> {
  const deadline = setTimeout(() => req.destroy(), deadlineMs);
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of req) {
      size += chunk.length;
      if (size > limit) throw new Error("body too large");
      chunks.push(chunk);
    }
  } finally {
    clearTimeout(deadline);
  }
  return Buffer.concat(chunks).toString("utf8");
}

export interface EncoderServer extends Server {
  /**
   * Stops listening and waits, for at most `graceMs`, until every delivery taken is answered;
   * true when they all were. A delivery sent meanwhile finds the port closed, and QStash delivers
   * it again (to the encoder that replaces this one) without this one having claimed the job.
   */
  drain(graceMs: number): Promise<boolean>;
}

/**
 * The encoder's HTTP face: QStash deliveries in, nothing else. A delivery is answered only
 * when its job is settled, so QStash's flow control (parallelism 2) counts running encodes.
 * `deliveryUrl` is where QStash delivers (the Worker publishes to it): a signature names the URL
 * its message was published to, so a message signed for another destination (one of the
 * Worker's QStash routes, say) replayed here is refused.
 */
export function createEncoderServer(
  deps: PipelineDeps,
  opts: {
    signingKeys: { current: string; next: string };
    deliveryUrl: string;
    concurrency: number;
    bodyDeadlineMs?: number;
  },
): EncoderServer {
  const receiver = new Receiver({ currentSigningKey: opts.signingKeys.current, nextSigningKey: opts.signingKeys.next });
  const limit = semaphore(opts.concurrency);
  // QStash delivers a message again when a delivery outlives its response timeout, though the
  // first is still encoding: the redelivery joins that encode rather than starting a second.
  // Another message for the job (the sweep dispatched it again: a new attempt) does not join an
  // encode the Worker has taken the job from; it waits for it to end, then claims on its own.
  const flights = flightsByKey<DeliveryResult>();
  const answering = new Set<Promise<unknown>>();

  const server = createServer((req, res) => {
    const handled = handle(req, res);
    answering.add(handled);
    void handled.finally(() => answering.delete(handled));
  });

  async function handle(req: IncomingMessage, res: ServerResponse) {
    const reply = (status: number, body: Record<string, unknown>, headers: Record<string, string> = {}) => {
      if (!res.headersSent)
        res.writeHead(status, { "content-type": "application/json", ...headers }).end(JSON.stringify(body));
    };
    if (req.method === "GET" && req.url === "/healthz") return reply(200, { ok: true });
    if (req.method !== "POST" || req.url !== ENCODER_DELIVERY_PATH) return reply(404, { error: "Not found" });

    let raw: string;
    try {
      raw = await readBody(req, opts.bodyDeadlineMs ?? BODY_DEADLINE_MS);
    } catch {
      // A connection closed at the deadline (or by the client) takes no answer.
      if (req.destroyed) return;
      return reply(413, { error: "Payload too large" });
    }
    const signature = req.headers["upstash-signature"];
    if (typeof signature !== "string") return reply(401, { error: "Invalid signature" });
    const refusal = await receiver.verify({ signature, body: raw, url: opts.deliveryUrl }).then(
      () => null,
      (err: unknown) => (err instanceof Error ? err.message : String(err)),
    );
    if (refusal !== null) {
      // With QStash's reason: an encoder whose PUBLIC_URL is not the Worker's ENCODER_URL refuses
      // every delivery, and the reason names both URLs.
      deps.log(
        JSON.stringify({
          level: "warn",
          msg: "a delivery was refused (401): its Upstash-Signature does not verify",
          reason: refusal,
          deliveryUrl: opts.deliveryUrl,
        }),
      );
      return reply(401, { error: "Invalid signature" });
    }

    const delivery = parseDelivery(raw);
    // A signed but malformed message will never succeed: tell QStash not to retry it.
    if (!delivery) return reply(489, { error: "Malformed delivery" }, { "Upstash-NonRetryable-Error": "true" });
    const { jobId } = delivery;
    const messageId = req.headers["upstash-message-id"];
    try {
      const result = await flights(flightKey(delivery), typeof messageId === "string" ? messageId : undefined, () =>
        limit(() => processDelivery(deps, delivery)),
      );
      reply(result === "done" ? 200 : 500, { jobId, result });
    } catch (err) {
      deps.log(
        formatStage(
          jobId,
          {
            stage: "error",
            message: `the delivery could not be processed (answered 503, QStash delivers it again): ${describeError(err)}`,
          },
          { encoder: deps.encoderName },
        ),
      );
      reply(503, { error: "Delivery could not be processed; retry" });
    }
  }

  return Object.assign(server, {
    async drain(graceMs: number) {
      server.close();
      let timer: NodeJS.Timeout | undefined;
      const graceOver = new Promise<false>((resolve) => (timer = setTimeout(resolve, graceMs, false)));
      const answered = Promise.allSettled([...answering]).then(() => true);
      try {
        return await Promise.race([answered, graceOver]);
      } finally {
        clearTimeout(timer);
      }
    },
  });
}
