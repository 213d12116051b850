import { readdir, readFile } from "node:fs/promises";
import { describe, expect, it, vi } from "vitest";
import { renice } from "../../../encoder/ffmpeg/priority";
import { limitToolMemory, runFfmpeg, toolCommand } from "../../../encoder/ffmpeg/run";

/**
 * A stream's later parts run below its start where tasks share cores (docs/playback.md#how-a-
 * stream-is-made): the niceness a run is given reaches FFmpeg itself, under prlimit or not, and
 * a renice reaches every one of its threads, where its encoders run.
 */

/** Each thread's niceness, from field 19 of /proc/<pid>/task/<tid>/stat. */
async function threadNiceness(pid: number): Promise<number[]> {
  const threads = await readdir(`/proc/${pid}/task`);
  return Promise.all(
    threads.map(async (tid) => {
      const stat = await readFile(`/proc/${pid}/task/${tid}/stat`, "utf8");
      // After the command's name, in parentheses, which may hold spaces: state is field 3.
      return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[16]);
    }),
  );
}

/** An x264 encode long enough to be looked at, its threads running. */
const busyEncode = [
  "-hide_banner",
  "-f",
  "lavfi",
  "-i",
  "testsrc2=size=640x360:rate=30",
  "-t",
  "30",
  "-c:v",
  "libx264",
  "-threads",
  "4",
  "-f",
  "null",
  "-",
];

describe("the niceness of a run", () => {
  it("is nice's, inside prlimit's, both exec'd in place", () => {
    expect(toolCommand("ffmpeg", ["-i", "x"], {})).toEqual(["ffmpeg", ["-i", "x"]]);
    expect(toolCommand("ffmpeg", ["-i", "x"], { niceness: 0 })).toEqual(["ffmpeg", ["-i", "x"]]);
    expect(toolCommand("ffmpeg", ["-i", "x"], { niceness: 10, memoryBytes: 1024 })).toEqual([
      "prlimit",
      ["--data=1024", "--", "nice", "-n", "10", "ffmpeg", "-i", "x"],
    ]);
  });

  it.each([
    ["without a memory limit", undefined],
    ["under a memory limit", 4 * 1024 ** 3],
  ])("reaches FFmpeg and all its threads %s, and a renice raises every thread's", async (_, limit) => {
    limitToolMemory(limit);
    const stop = new AbortController();
    let pid: number | undefined;
    const run = runFfmpeg(busyEncode, {
      signal: stop.signal,
      niceness: 5,
      onSpawn: (p) => {
        pid = p;
      },
    }).catch((err) => err);
    try {
      // Its encoder's threads started: more than FFmpeg's main thread and its demuxer's.
      await vi.waitFor(async () => expect((await threadNiceness(pid!)).length).toBeGreaterThan(3), {
        timeout: 20_000,
        interval: 50,
      });
      expect((await readFile(`/proc/${pid}/cmdline`, "utf8")).split("\0")[0]).toBe("ffmpeg");
      expect(new Set(await threadNiceness(pid!))).toEqual(new Set([5]));
      await renice(pid!, 12);
      expect(new Set(await threadNiceness(pid!))).toEqual(new Set([12]));
    } finally {
      stop.abort(new Error("done looking"));
      limitToolMemory(undefined);
    }
    expect(await run).toEqual(new Error("done looking"));
  });

  it("a renice of a process that is gone is nothing to do", async () => {
    let pid: number | undefined;
    await runFfmpeg(["-hide_banner", "-f", "lavfi", "-i", "nullsrc=d=0.1", "-f", "null", "-"], {
      onSpawn: (p) => {
        pid = p;
      },
    });
    await expect(renice(pid!, 10)).resolves.toBeUndefined();
  });
});
