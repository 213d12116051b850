import { Client } from "@upstash/qstash";
import { ENCODER_PARALLELISM, JOB_DELIVERY_RETRIES } from "../../domain/jobs";
import type { Env } from "../env";


export interface Queue {
  publishJob(jobId: string): Promise<string>;
  deleteMessage(messageId: string): Promise<void>;
  publishWebhook(url: string, body: string, headers: Record<string, string>): Promise<string>;
}

export function createQueue(env: Env): Queue {
  // A failed publish must surface quickly so the job can be failed and its unit released.
  const client = new Client({ baseUrl: env.QSTASH_URL, token: env.QSTASH_TOKEN, retry: { retries: 1, backoff: () => 100 } });
  return {
    async publishJob(jobId) {
      const res = await client.publishJSON({
        url: `${env.ENCODER_URL.replace(/\/$/, "")}/deliveries/jobs`,
        body: { jobId },
        retries: JOB_DELIVERY_RETRIES,
        flowControl: { key: "encoder", parallelism: ENCODER_PARALLELISM },
      });
      return res.messageId;
    },
    async deleteMessage(messageId) {
      await client.messages.cancel(messageId);
    },
    async publishWebhook(url, body, headers) {
      const res = await client.publish({
        url,
        body,
        headers: { "Content-Type": "application/json", ...headers },
        retries: 5,
      });
      return res.messageId;
    },
  };
}
