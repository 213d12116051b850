import type { TestProject } from "vitest/node";
import { startTestStack } from "../../support/stack";
import { startDeliverySink } from "./delivery-sink";

declare module "vitest" {
  export interface ProvidedContext {
    stack: import("../../support/stack").StackInfo;
  }
}

/** The Worker and the local cloud, with a delivery sink where the encoder would be. */
export default async function setup(project: TestProject) {
  const sink = await startDeliverySink();
  // Not the default (8), so a test sees the setting reach the parts' messages.
  const stack = await startTestStack({ kind: "external", url: sink.url }, { workerEnv: { PART_PARALLELISM: "6" } });
  project.provide("stack", stack.info);
  return async () => {
    await stack.stop();
    await sink.stop();
  };
}
