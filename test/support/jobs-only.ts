import type { Renderer, Renderers } from "../../encoder/jobs/pipeline";

/** The encoder's renderers for a test whose jobs never split: a part or a join delivered to it is a failure. */
export function jobsOnly(job: Renderer): Renderers {
  const never = () => Promise.reject(new Error("this test's jobs do not split"));
  return { job, part: never, join: never };
}
