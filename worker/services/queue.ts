import { Client } from "@upstash/qstash";
import { ENCODER_PARALLELISM, encoderDeliveryUrl } from "../../domain/jobs";
import { routeUrl } from "../../domain/urls";
import type { Env } from "../env";
import type { Pool } from "./pool";
import { measured } from "./timing";

const WEBHOOK_DELIVERY_RETRIES = 5;

export interface Queue {
  /**
   * A job's dispatch: the message carries its number (the job's `dispatch`), and only the
   * current one's deliveries may claim the job. Deduplicated by job and dispatch: a dispatch
   * published again (its first publish's answer lost) enqueues nothing. `delaySeconds` holds
   * a retry back from the source that just failed.
   */
  publishJob(jobId: string, dispatch: number, options?: { delaySeconds?: number }): Promise<string>;
  /**
   * A part of a split job (docs/scaling.md), under the parts' own flow-control key so a job's
   * parts spread over the pool without holding the contract's job slots, at the parallelism the
   * pool allows (services/pool.ts). Deduplicated by job, part and the part's dispatch.
   */
  publishPart(jobId: string, index: number, dispatch: number, options?: { delaySeconds?: number }): Promise<string>;
  /** A split job's join, once its last part is done; it carries the job's dispatch, as a job's message does. */
  publishJoin(jobId: string, dispatch: number, options?: { delaySeconds?: number }): Promise<string>;
  deleteMessage(messageId: string): Promise<void>;
  /**
   * Whether QStash still holds the message, waiting or being delivered. It forgets one it
   * delivered, gave up on or had cancelled: its API then answers 404, and this false.
   */
  holdsMessage(messageId: string): Promise<boolean>;
  /**
   * Hands QStash a job's webhook: its final state's (`completed`, `failed`), or `playable` (a
   * streaming output's link given); each attempt comes back to its webhook-deliveries route.
   * Deduplicated by job and event: the sweep may publish one again whose first publish
   * succeeded unrecorded, and the receiver still gets one webhook.
   */
  publishWebhook(jobId: string, event: string): Promise<string>;
}

/** The Worker's routes QStash calls: mounted at these paths (app.ts), and published with them here. */
export const QSTASH_ROUTES = {
  webhookDeliveries: "/internal/webhook-deliveries",
  dispatchFailures: "/internal/dispatch-failures",
} as const;

/**
 * The public URL of one of the Worker's routes, as QStash is told to call it, and as its
 * signature (`sub`) names it when the route verifies a delivery (routes/internal/verify.ts).
 */
export const workerUrl = (env: Pick<Env, "PUBLIC_URL">, path: string) => routeUrl(env.PUBLIC_URL, path);

/** QStash's deduplication ids: one message per dispatch of a job, one per job's final state. */
const dispatchDeduplicationId = (jobId: string, dispatch: number) => `job-${jobId}-${dispatch}`;
const partDeduplicationId = (jobId: string, index: number, dispatch: number) => `part-${jobId}-${index}-${dispatch}`;
const joinDeduplicationId = (jobId: string, dispatch: number) => `join-${jobId}-${dispatch}`;

/**
 * Redeliveries of one dispatch: only a delivery that got no answer, or whose encoder died, is
 * made again (a failure at the source is a new dispatch). Each claim it makes after an encoder
 * died counts an interruption, and a message QStash gives up on is one too (lib/lost-messages.ts).
 */
export const DISPATCH_RETRIES = 3;
const webhookDeduplicationId = (jobId: string, event: string) => `webhook-${jobId}-${event}`;

export function createQueue(env: Env, pool: Pool): Queue {
  // A failed publish must surface quickly so the job can be failed and its unit released.
  const client = new Client({
    baseUrl: env.QSTASH_URL,
    token: env.QSTASH_TOKEN,
    retry: { retries: 1, backoff: () => 100 },
  });
  // Split jobs' messages (parts and joins) share one flow-control key, apart from whole jobs' `encoder`,
  // at the parallelism the pool allows when each is published.
  const partsFlow = async () => ({ key: "parts", parallelism: await pool.partParallelism() });
  const deliveryUrl = encoderDeliveryUrl(env.ENCODER_URL);
  const dispatchFailuresUrl = workerUrl(env, QSTASH_ROUTES.dispatchFailures);
  const webhookDeliveriesUrl = workerUrl(env, QSTASH_ROUTES.webhookDeliveries);
  /** A delivery to the encoder: its body, flow control and deduplication; retries, their delay and the failure callback are every delivery's. */
  async function publishDelivery(
    body: Record<string, unknown>,
    flowControl: { key: string; parallelism: number },
    deduplicationId: string,
    delaySeconds?: number,
  ) {
    const res = await measured("queue", () =>
      client.publishJSON({
        url: deliveryUrl,
        body,
        retries: DISPATCH_RETRIES,
        retryDelay: env.DISPATCH_RETRY_DELAY,
        ...(delaySeconds ? { delay: delaySeconds } : {}),
        flowControl,
        deduplicationId,
        failureCallback: dispatchFailuresUrl,
      }),
    );
    return res.messageId;
  }
  return {
    publishJob: (jobId, dispatch, { delaySeconds } = {}) =>
      publishDelivery(
        { jobId, dispatch },
        { key: "encoder", parallelism: ENCODER_PARALLELISM },
        dispatchDeduplicationId(jobId, dispatch),
        delaySeconds,
      ),
    publishPart: async (jobId, index, dispatch, { delaySeconds } = {}) =>
      publishDelivery(
        { jobId, dispatch, part: index },
        await partsFlow(),
        partDeduplicationId(jobId, index, dispatch),
        delaySeconds,
      ),
    publishJoin: async (jobId, dispatch, { delaySeconds } = {}) =>
      publishDelivery(
        { jobId, dispatch, join: true },
        await partsFlow(),
        joinDeduplicationId(jobId, dispatch),
        delaySeconds,
      ),
    async deleteMessage(messageId) {
      await measured("queue", () => client.messages.cancel(messageId));
    },
    async holdsMessage(messageId) {
      try {
        await measured("queue", () => client.messages.get(messageId));
        return true;
      } catch (err) {
        if ((err as { status?: number }).status === 404) return false;
        throw err;
      }
    },
    async publishWebhook(jobId, event) {
      const res = await measured("queue", () =>
        client.publishJSON({
          url: webhookDeliveriesUrl,
          // A final state's webhook is told by the job's status when it is sent; the playable one is not.
          body: event === "playable" ? { jobId, event } : { jobId },
          retries: WEBHOOK_DELIVERY_RETRIES,
          deduplicationId: webhookDeduplicationId(jobId, event),
        }),
      );
      return res.messageId;
    },
  };
}
