import { startFixtureServer } from "../e2e/fixtures";
import { startE2E } from "../e2e/harness";
import { startIdempotentReceiver } from "./support";

type StackOptions = Omit<Parameters<typeof startE2E>[0], "allowLoopbackSources" | "log">;
type StackInfo = Awaited<ReturnType<typeof startE2E>>["stack"]["info"];

/**
 * The service as each faults file runs it: the whole stack with the real encoder process
 * (loopback sources allowed, every log line kept), an enterprise account whose webhook is an
 * idempotent receiver, and a fixture server for sources. A file's fronts go into `options`
 * (their URLs) before the start and are pointed at what they stand before by `connect` after it.
 */
export async function startFaultStack(options: StackOptions, connect: (info: StackInfo) => void = () => undefined) {
  const logs: { source: string; line: string }[] = [];
  const [fixtures, receiver] = await Promise.all([startFixtureServer(), startIdempotentReceiver()]);
  const e2e = await startE2E({
    ...options,
    allowLoopbackSources: true,
    log: (source, line) => logs.push({ source, line }),
  }).catch(async (err) => {
    await Promise.all([fixtures.stop(), receiver.stop()]);
    throw err;
  });
  connect(e2e.stack.info);
  const client = await e2e.client();
  const secret = (await e2e.admin.setWebhook(client.accountId, receiver.url)).secret;
  return {
    e2e,
    fixtures,
    receiver,
    client,
    secret,
    logs,
    /** The encoder's stage lines of one job (encoder/jobs/stage-log.ts), without their `job <id>` prefix. */
    stageLines(jobId: string): string[] {
      const prefix = `job ${jobId}  `;
      return logs
        .filter((l) => l.source === "encoder" && l.line.startsWith(prefix))
        .map((l) => l.line.slice(prefix.length));
    },
    async stop() {
      await e2e.stop();
      await Promise.all([fixtures.stop(), receiver.stop()]);
    },
  };
}

export type FaultStack = Awaited<ReturnType<typeof startFaultStack>>;
