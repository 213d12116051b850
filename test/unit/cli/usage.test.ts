import { describe, expect, it } from "vitest";
import { EXIT } from "../../../cli/exit-codes";
import { vep } from "../../support/cli";

/** Arguments commander refuses: nothing is sent, so no service is needed (this port answers nothing). */
const api = "http://127.0.0.1:9";

describe.concurrent("vep: arguments it cannot take", () => {
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
      expect(res.json, args.join(" ")).toEqual({
        error: { kind: "usage", retryable: false, message, exitCode: EXIT.usage },
      });
    }
  });

  it("one line on stderr, pointing to the command's --help rather than printing it; nothing on stdout without --json", async () => {
    const cases: [string[], string][] = [
      [["--bogus", "presets"], "vep: usage: unknown option '--bogus'; see vep --help"],
      [["--jsno", "presets"], "vep: usage: unknown option '--jsno' (Did you mean --json?); see vep --help"],
      [
        ["encode", "https://media.example.com/a.mp4"],
        "vep: usage: required option '--preset <id>' not specified; see vep encode --help",
      ],
      [["edl", "render"], "vep: usage: missing required argument 'file'; see vep edl render --help"],
      [
        ["presets", "extra"],
        "vep: usage: too many arguments for 'presets'. Expected 0 arguments but got 1; see vep presets --help",
      ],
      [["jobs"], "vep: usage: a command is needed; see vep jobs --help"],
    ];
    for (const [args, line] of cases) {
      const res = await vep(args, { api });
      expect(res.code, args.join(" ")).toBe(EXIT.usage);
      expect(res.stderr, args.join(" ")).toBe(`${line}\n`);
      expect(res.stdout, args.join(" ")).toBe("");
    }
  });

  it("--help still prints the help, on stdout, and succeeds", async () => {
    const res = await vep(["encode", "--help"], { api });
    expect(res.code).toBe(0);
    expect(res.stdout).toMatch(/^Usage: vep encode \[options\] <source>/);
    expect(res.stderr).toBe("");
  });
});
