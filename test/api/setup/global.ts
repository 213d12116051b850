import type { TestProject } from "vitest/node";
import { startFlyMachinesApi } from "../../../dev/cloud/fly-machines-api";
import { startTestStack } from "../../support/stack";
import { POOL_APP, POOL_MACHINES } from "./pool";
import { startDeliverySink } from "./delivery-sink";

declare module "vitest" {
  export interface ProvidedContext {
    stack: import("../../support/stack").StackInfo;
  }
}

/**
 * The Worker and the local cloud, with a delivery sink where the encoder would be, and the
 * encoder app's Machines as Fly's Machines API lists them, which the Worker sizes the parts'
 * flow control by.
 */
export default async function setup(project: TestProject) {
  const sink = await startDeliverySink();
  const machines = await startFlyMachinesApi({ host: "127.0.0.1", app: POOL_APP, machines: POOL_MACHINES });
  const stack = await startTestStack(
    { kind: "external", url: sink.url },
    { workerEnv: { FLY_APP: machines.app, FLY_API_TOKEN: machines.token, FLY_API_URL: machines.url } },
  );
  project.provide("stack", stack.info);
  return async () => {
    await stack.stop();
    await sink.stop();
    await machines.stop();
  };
}
