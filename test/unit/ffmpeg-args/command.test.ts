import { describe, expect, it } from "vitest";
import { head } from "../../../encoder/ffmpeg/args/command";
import { HEAD, IN, MAX_PICTURE } from "./fixtures";

describe("head: the opening of every command, presets and timelines", () => {
  it("one source path", () => {
    expect(head(IN)).toEqual(HEAD);
    expect(head([{ path: IN }])).toEqual(HEAD);
  });

  it("several inputs: each limited to the file protocol and the picture size limit, with its own options before its -i", () => {
    expect(
      head(
        [
          { path: "/w/a", options: ["-ss", "2", "-t", "3"] },
          { path: "/w/logo.png", options: ["-loop", "1"] },
          { path: "/w/b" },
        ],
        "info",
      ),
    ).toEqual([
      "-hide_banner",
      "-nostdin",
      "-y",
      "-protocol_whitelist",
      "file",
      "-max_pixels",
      MAX_PICTURE,
      "-ss",
      "2",
      "-t",
      "3",
      "-i",
      "/w/a",
      "-protocol_whitelist",
      "file",
      "-max_pixels",
      MAX_PICTURE,
      "-loop",
      "1",
      "-i",
      "/w/logo.png",
      "-protocol_whitelist",
      "file",
      "-max_pixels",
      MAX_PICTURE,
      "-i",
      "/w/b",
      "-loglevel",
      "info",
      "-progress",
      "pipe:1",
      "-nostats",
    ]);
  });
});
