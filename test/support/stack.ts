import { startStack, type EncoderChoice } from "../../dev/stack";
import { createScratchDatabase } from "./postgres";

export type { StackInfo } from "../../dev/stack";

/** The machine's Redis, behind the Upstash REST stand-in. */
export const TEST_REDIS_URL = "redis://127.0.0.1:6379";

/** The caller's log, and every line on stderr too when DEBUG_STACK is set. */
export function stackLog(log?: (source: string, line: string) => void) {
  return (source: string, line: string) => {
    log?.(source, line);
    if (process.env.DEBUG_STACK) console.error(`[${source}] ${line}`);
  };
}

/** The stack on a scratch database of the machine's PostgreSQL, with the real Redis behind the REST stand-in. */
export async function startTestStack(
  encoder: EncoderChoice,
  opts: {
    qstashRetryBaseMs?: number;
    log?: (source: string, line: string) => void;
    workerEnv?: Record<string, string>;
    workerInspectorPort?: number;
  } = {},
) {
  const database = await createScratchDatabase("vep_test");
  try {
    const stack = await startStack({
      databaseUrl: database.url,
      redisUrl: TEST_REDIS_URL,
      encoder,
      qstashRetryBaseMs: opts.qstashRetryBaseMs,
      workerEnv: opts.workerEnv,
      workerInspectorPort: opts.workerInspectorPort,
      log: stackLog(opts.log),
    });
    return {
      ...stack,
      stop: async () => {
        await stack.stop();
        await database.drop();
      },
    };
  } catch (err) {
    await database.drop();
    throw err;
  }
}
