import { startStack, type EncoderChoice } from "../../dev/stack";
import { createScratchDatabase } from "./postgres";

export type { StackInfo } from "../../dev/stack";

/** The stack on a scratch database of the machine's PostgreSQL, with the real Redis behind the REST stand-in. */
export async function startTestStack(
  encoder: EncoderChoice,
  opts: { qstashRetryBaseMs?: number; log?: (source: string, line: string) => void } = {},
) {
  const database = await createScratchDatabase("vep_test");
  try {
    const stack = await startStack({
      databaseUrl: database.url,
      redisUrl: "redis://127.0.0.1:6379",
      encoder,
      qstashRetryBaseMs: opts.qstashRetryBaseMs,
      log: (source, line) => {
        opts.log?.(source, line);
        if (process.env.DEBUG_STACK) console.error(`[${source}] ${line}`);
      },
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
