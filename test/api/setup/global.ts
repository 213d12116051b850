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
  const stack = await startTestStack({ kind: "external", url: sink.url });
  project.provide("stack", stack.info);
  return async () => {
    await stack.stop();
    await sink.stop();
  };
}
