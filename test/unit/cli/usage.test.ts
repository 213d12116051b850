import { describe, expect, it } from "vitest";
import { EXIT } from "../../../cli/exit-codes";
import { vep } from "../../support/cli";

/** Arguments commander refuses: nothing is sent, so no service is needed (this port answers nothing). */
const api = "http://127.0.0.1:9";

describe("vep: arguments it cannot take", () => {
  it("with --json, the error is a JSON document on stdout, kind usage, as every other failure's", async () => {
    const cases: [string[], string][] = [
      [["--json", "--bogus", "presets"], "unknown option '--bogus'"],
      [["--json", "encode", "https://media.example.com/a.mp4"], "required option '--preset <id>' not specified"],
      [["jobs", "get", "--json"], "missing required argument 'id'"],
      [["--json", "jobs"], "a command is needed"],
    ];
    for (const [args, message] of cases) {
      const res = await vep(args, { api });
      expect(res.code, args.join(" ")).toBe(EXIT.usage);
      expect(res.json, args.join(" ")).toEqual({ error: { kind: "usage", retryable: false, message, exitCode: EXIT.usage } });
    }
  });

  it("without --json, stdout stays empty", async () => {
    const res = await vep(["--bogus", "presets"], { api });
    expect(res.code).toBe(EXIT.usage);
    expect(res.stdout).toBe("");
  });
});
