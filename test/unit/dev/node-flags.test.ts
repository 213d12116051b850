import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { CLOUD_NODE_FLAGS, ENCODER_NODE_FLAGS } from "../../../dev/node-flags";
import { PROJECT_ROOT } from "../../../dev/state";

const scripts: Record<string, string> = JSON.parse(readFileSync(join(PROJECT_ROOT, "package.json"), "utf8")).scripts;
const words = (command: string) => command.split(/\s+/);

describe("dev/node-flags: every command line that streams media through Node carries its V8 flags", () => {
  it("the encoder's: the container's command and npm run start:encoder", () => {
    const dockerfile = readFileSync(join(PROJECT_ROOT, "encoder/Dockerfile"), "utf8");
    const cmd: string[] = JSON.parse(/^CMD (\[.*\])$/m.exec(dockerfile)?.[1] ?? "[]");
    expect(cmd.slice(0, 1 + ENCODER_NODE_FLAGS.length)).toEqual(["node", ...ENCODER_NODE_FLAGS]);
    expect(words(scripts["start:encoder"])).toEqual(expect.arrayContaining(ENCODER_NODE_FLAGS));
  });

  it("the local cloud's: npm run dev and the benchmarks that host it in their own process", () => {
    for (const name of ["dev", "bench:api", "bench:profile", "bench:encode", "bench:split"])
      expect(words(scripts[name]), name).toEqual(expect.arrayContaining(CLOUD_NODE_FLAGS));
  });

  it("this Node takes them (one it did not know would refuse to start)", () => {
    for (const flags of [ENCODER_NODE_FLAGS, CLOUD_NODE_FLAGS])
      expect(execFileSync(process.execPath, [...flags, "-e", "process.stdout.write('ok')"], { encoding: "utf8" })).toBe(
        "ok",
      );
  });
});
