import { eq } from "drizzle-orm";
import { spawn } from "node:child_process";
import { once } from "node:events";
import { access, mkdtemp, readFile, rm, truncate, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { freePort } from "../../dev/cloud/free-port";
import { startWorkerProcess } from "../../dev/worker-process";
import { workerVars } from "../../dev/worker-vars";
import { jobs, uploads, usage } from "../../drizzle/schema";
import { quotaPeriod } from "../../domain/time";
import { EXIT } from "../../cli/exit-codes";
import { writeSampleTimeline } from "../../dev/samples";
import { VEP_BIN, vep, vepEnv } from "../support/cli";
import type { CreatedEdlJob, CreatedJob, EdlValidation, Job, JobList, PresetCatalogue, Upload } from "../../client";
import { admin, completeJob, createJob, failEveryAttempt, newAccount, SOURCE, stack } from "./harness";
import { jobsInEveryState } from "./job-states";
import { claimStream, completeStream, reportSegments } from "./stream-reports";

const api = stack.apiUrl;
const timeline = (clips: number) => ({
  version: "1.0",
  timeline: {
    tracks: [
      {
        type: "video",
        clips: Array.from({ length: clips }, (_, i) => ({ id: `c${i}`, src: SOURCE, in: 0, out: 2, startTime: 2 * i })),
      },
    ],
  },
});

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "vep-cli-"));
});

describe.concurrent("vep: commands that need no encoder", () => {
  it("presets, with and without a key, as text and as JSON", async () => {
    const text = await vep(["presets"], { api });
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(/mp4_264_720p\s+standard\s+free\s+available/);
    expect(text.stdout).toMatch(/7 of 23 presets available on the free plan/);
    const { apiKey } = await newAccount("business");
    const json = await vep<PresetCatalogue>(["--json", "presets"], { api, key: apiKey });
    expect(json.code).toBe(0);
    expect(json.json.meta).toMatchObject({ userPlan: "business", availablePresets: 19 });
  });

  it("encode without --wait, jobs list, get and cancel", async () => {
    const { apiKey } = await newAccount("free");
    const created = await vep<CreatedJob>(
      ["--json", "encode", SOURCE, "--preset", "mp4_264_480p", "--metadata", '{"orderId":1}'],
      {
        api,
        key: apiKey,
      },
    );
    expect(created.code).toBe(0);
    expect(created.json).toMatchObject({ status: "queued", preset: "mp4_264_480p", user: { remainingJobs: 9 } });
    const id = created.json.id;
    const list = await vep<JobList>(["--json", "jobs", "list", "--status", "queued"], { api, key: apiKey });
    expect(list.json.jobs.map((j) => j.id)).toEqual([id]);
    const text = await vep(["jobs", "list"], { api, key: apiKey });
    expect(text.stdout).toContain(id);
    const get = await vep(["--json", "jobs", "get", id], { api, key: apiKey });
    expect(get.json).toMatchObject({ id, status: "queued", clientMetadata: { orderId: 1 } });
    const cancel = await vep(["jobs", "cancel", id], { api, key: apiKey });
    expect(cancel.code).toBe(0);
    expect(cancel.stdout).toMatch(/Job cancelled successfully/);
  });

  it("edl validate: exit 0 and the stats for a valid timeline, 3 and the errors for an invalid one, which render names too", async () => {
    const { apiKey } = await newAccount("free");
    const good = join(dir, "good.json");
    const tooLong = join(dir, "too-many-clips.json");
    await writeFile(good, JSON.stringify(timeline(2)));
    await writeFile(tooLong, JSON.stringify(timeline(6)));
    const valid = await vep(["edl", "validate", good], { api, key: apiKey });
    expect(valid.code).toBe(0);
    expect(valid.stdout).toMatch(/^valid: 2 clips, 1 tracks, 4 s/);
    const invalid = await vep<EdlValidation>(["--json", "edl", "validate", tooLong], { api, key: apiKey });
    expect(invalid.code).toBe(EXIT.badRequest);
    expect(invalid.json.valid).toBe(false);
    expect(invalid.stderr).toMatch(/invalid/);
    // render refuses it (400 EDL validation failed): the line says why, not only how many errors.
    const refused = await vep(["edl", "render", tooLong], { api, key: apiKey });
    expect(refused.code).toBe(EXIT.badRequest);
    expect(refused.stderr.trim()).toMatch(
      /^vep: refused: The timeline has 1 error\(s\).* \(Too many clips for the Starter plan: 6 \(maximum 5\)\) \(HTTP 400\)$/,
    );
  });

  it("edl validate and render take a version 1.1 timeline: crossfades, a filter and captions; its errors name their paths", async () => {
    const { apiKey } = await newAccount("pro");
    const crossfade = { in: { type: "crossfade", duration: 0.5 } };
    const shots = Array.from({ length: 5 }, (_, i) => ({
      id: `shot${i}`,
      src: SOURCE,
      in: 0,
      out: 2,
      startTime: 1.5 * i,
      ...(i > 0 && { transition: crossfade }),
      ...(i === 2 && { filters: ["greyscale"] }),
    }));
    const document = {
      version: "1.1",
      timeline: {
        tracks: [
          { type: "video", clips: shots },
          { type: "caption", clips: [{ id: "subs", cues: [{ start: 0, end: 2, text: "Hello" }] }] },
        ],
      },
    };
    const good = join(dir, "timeline-1-1.json");
    await writeFile(good, JSON.stringify(document));
    const valid = await vep<EdlValidation>(["--json", "edl", "validate", good], { api, key: apiKey });
    expect(valid.code, valid.stderr).toBe(0);
    expect(valid.json).toMatchObject({
      valid: true,
      stats: { clips: 6, tracks: 2, duration: 8, features: ["transition", "filters", "captions"] },
    });
    const rendered = await vep<CreatedEdlJob>(["--json", "edl", "render", good], { api, key: apiKey });
    expect(rendered.code, rendered.stderr).toBe(0);
    expect(rendered.json.stats).toMatchObject({ clips: 6, duration: 8 });

    shots[1].transition = { in: { type: "spin", duration: 0.5 } };
    const bad = join(dir, "timeline-1-1-bad.json");
    await writeFile(bad, JSON.stringify(document));
    const invalid = await vep(["edl", "validate", bad], { api, key: apiKey });
    expect(invalid.code).toBe(EXIT.badRequest);
    expect(invalid.stdout).toContain(
      "error: timeline.tracks[0].clips[1].transition.in.type: must be one of fade, crossfade, wipeLeft,",
    );
  });

  it("edl validate and render take the sample timeline npm run dev writes (a request body, {edl, metadata}), its metadata kept unless a flag replaces it", async () => {
    const { apiKey } = await newAccount("free");
    const sample = await writeSampleTimeline(await mkdtemp(join(dir, "samples-")), "free", {
      clip: SOURCE,
      logo: "https://media.example.com/logo.png",
    });
    const valid = await vep(["edl", "validate", sample.path], { api, key: apiKey });
    expect(valid.stderr).toBe("");
    expect(valid.code).toBe(0);
    expect(valid.stdout).toMatch(/^valid: 3 clips, 2 tracks, 8 s/);
    const rendered = await vep<CreatedEdlJob>(["--json", "edl", "render", sample.path], { api, key: apiKey });
    expect(rendered.code, rendered.stderr).toBe(0);
    const renamed = await vep<CreatedEdlJob>(["--json", "edl", "render", sample.path, "--description", "renamed"], {
      api,
      key: apiKey,
    });
    expect(renamed.code, renamed.stderr).toBe(0);
    const stored = async (id: string) =>
      (await vep<Job>(["--json", "jobs", "get", id], { api, key: apiKey })).json.clientMetadata;
    expect(await stored(rendered.json.id)).toEqual({ name: "npm run dev sample timeline" });
    expect(await stored(renamed.json.id)).toEqual({ name: "npm run dev sample timeline", description: "renamed" });
  });

  it("jobs download writes a completed job's output, under a name of its kind only", async () => {
    const { apiKey, accountId } = await newAccount("free");
    const job = await createJob(apiKey);
    await completeJob(job.id, accountId, "the bytes");
    const out = join(dir, "download.mp4");
    const res = await vep(["jobs", "download", job.id, "--out", out], { api, key: apiKey });
    expect(res.code).toBe(0);
    expect(res.stdout).toMatch(/saved .* \(9 bytes\)/);
    const misnamed = join(dir, "download.zip");
    const refused = await vep(["jobs", "download", job.id, "--out", misnamed], { api, key: apiKey });
    expect(refused.code).toBe(EXIT.usage);
    expect(refused.stderr.trim()).toBe(
      `vep: --out ${misnamed}: the job writes a .mp4 file, not .zip; name it ${join(dir, "download.mp4")}`,
    );
    await expect(access(misnamed)).rejects.toThrow(/ENOENT/);
  });

  it("--out with --json: stdout holds the job alone, the saved file's line goes to stderr", async () => {
    const { apiKey, accountId } = await newAccount("free");
    const job = await createJob(apiKey);
    await completeJob(job.id, accountId, "the bytes");
    const out = join(dir, "waited.mp4");
    const res = await vep(["--json", "jobs", "wait", job.id, "--out", out], { api, key: apiKey });
    expect(res.code).toBe(0);
    expect(res.json).toMatchObject({ id: job.id, status: "completed" });
    expect(res.stderr).toBe(`saved ${out} (9 bytes)\n`);
    expect(await readFile(out, "utf8")).toBe("the bytes");
  });
});

describe.concurrent("vep: one clear line and a distinct exit code per error class", () => {
  let broken: Awaited<ReturnType<typeof startWorkerProcess>>;
  beforeAll(async () => {
    // The real Worker with its database unreachable: every authenticated call is a 500.
    const vars = workerVars(
      stack.cloud,
      { publicUrl: stack.apiUrl, encoderUrl: stack.encoderUrl },
      stack.internalSecret,
    );
    broken = await startWorkerProcess({
      port: await freePort(),
      vars: { ...vars, DATABASE_URL: "postgres://postgres@127.0.0.1:9/none" },
    });
  });
  afterAll(async () => {
    await broken?.stop();
  });

  const oneLine = (stderr: string) => {
    const lines = stderr.trim().split("\n");
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^vep: /);
    return lines[0];
  };

  it("every class has its own code", () => {
    const codes = Object.values(EXIT);
    expect(new Set(codes).size).toBe(codes.length);
  });

  it("usage errors: 2", async () => {
    const res = await vep(["encode", SOURCE], { api });
    expect(res.code).toBe(EXIT.usage);
    expect(oneLine(res.stderr)).toBe(
      "vep: usage: required option '--preset <id>' not specified; see vep encode --help",
    );
    const badFile = await vep(["edl", "validate", join(dir, "missing.json")], { api, key: "spk_x" });
    expect(badFile.code).toBe(EXIT.usage);
    expect(oneLine(badFile.stderr)).toMatch(/cannot read .*missing\.json: ENOENT/);
  });

  it("a bad --interval, an --out that cannot be written or that names another kind of file is refused before the job is created: no quota unit spent", async () => {
    const { apiKey } = await newAccount("free");
    const timelineFile = join(dir, "interval.json");
    await writeFile(timelineFile, JSON.stringify(timeline(1)));
    const refusals: [string[], RegExp][] = [
      [
        ["encode", SOURCE, "--preset", "mp4_264_480p", "--out", join(dir, "x.mp4"), "--interval", "0"],
        /--interval must be a positive number of seconds/,
      ],
      [
        ["edl", "render", timelineFile, "--wait", "--interval", "abc"],
        /--interval must be a positive number of seconds/,
      ],
      [
        ["encode", SOURCE, "--preset", "mp4_264_480p", "--out", join(dir, "no-such-dir", "x.mp4")],
        /cannot write .*no-such-dir.*: ENOENT/,
      ],
      [["encode", SOURCE, "--preset", "mp4_264_480p", "--out", dir], /cannot write .*: EISDIR/],
      // A name whose extension is not what the job will write.
      [
        ["encode", SOURCE, "--preset", "hls_abr_264_basic", "--out", join(dir, "ladder.mp4")],
        /preset hls_abr_264_basic writes a ZIP archive \(\.zip\), not \.mp4; name it .*ladder\.zip$/,
      ],
      [
        ["edl", "render", timelineFile, "--out", join(dir, "timeline.webm")],
        /the timeline writes a \.mp4 file, not \.webm; name it .*timeline\.mp4$/,
      ],
    ];
    for (const [args, message] of refusals) {
      const res = await vep(args, { api, key: apiKey });
      expect(res.code, args.join(" ")).toBe(EXIT.usage);
      expect(oneLine(res.stderr)).toMatch(message);
    }
    const list = await vep<JobList>(["--json", "jobs", "list"], { api, key: apiKey });
    expect(list.json.jobs).toEqual([]);
  });

  it("400 refused: 3; 401: 4; 403: 5; 404: 6; 410: 7; 429: 8; 409: 9", async () => {
    const free = await newAccount("free");
    const invalidPreset = await vep(["encode", SOURCE, "--preset", "mp4_999p"], { api, key: free.apiKey });
    expect(invalidPreset.code).toBe(EXIT.badRequest);
    expect(oneLine(invalidPreset.stderr)).toBe(
      "vep: refused: Unknown preset 'mp4_999p'. See availablePresets or GET /api/v1/presets. (HTTP 400)",
    );
    // A Validation error says which field, and why.
    const withCredentials = await vep(
      ["encode", "https://user:pw@media.example.com/a.mp4", "--preset", "mp4_264_720p"],
      { api, key: free.apiKey },
    );
    expect(withCredentials.code).toBe(EXIT.badRequest);
    expect(oneLine(withCredentials.stderr)).toBe(
      "vep: refused: Invalid request parameters (inputUrl: Invalid input URL) (HTTP 400)",
    );

    const noKey = await vep(["jobs", "list"], { api });
    expect(noKey.code).toBe(EXIT.unauthorized);
    expect(oneLine(noKey.stderr)).toMatch(/^vep: unauthorized: .*\(HTTP 401\); pass --key or set VEP_API_KEY$/);

    const aboveplan = await vep(["encode", SOURCE, "--preset", "hls_abr_264_standard"], { api, key: free.apiKey });
    expect(aboveplan.code).toBe(EXIT.forbidden);
    expect(oneLine(aboveplan.stderr)).toMatch(
      /^vep: not in your plan: The preset 'hls_abr_264_standard' is not available on the Starter plan/,
    );

    const unknown = await vep<{ error: unknown }>(["--json", "jobs", "get", crypto.randomUUID()], {
      api,
      key: free.apiKey,
    });
    expect(unknown.code).toBe(EXIT.notFound);
    expect(unknown.json.error).toMatchObject({ kind: "not-found", status: 404, retryable: false });

    const pro = await newAccount("pro");
    const { legacy } = await jobsInEveryState(pro.apiKey, pro.accountId);
    const gone = await vep(["jobs", "download", legacy, "--out", join(dir, "legacy.mp4")], { api, key: pro.apiKey });
    expect(gone.code).toBe(EXIT.gone);
    expect(oneLine(gone.stderr)).toMatch(/^vep: gone: .*older storage layout.*\(HTTP 410\)$/);

    const spent = await newAccount("free");
    await admin.db.insert(usage).values({ accountId: spent.accountId, period: quotaPeriod(new Date()), count: 10 });
    const quota = await vep(["encode", SOURCE, "--preset", "mp4_264_720p"], { api, key: spent.apiKey });
    expect(quota.code).toBe(EXIT.quotaExceeded);
    expect(oneLine(quota.stderr)).toMatch(/^vep: quota used up: You have used all 10 jobs/);

    const key = `cli-${crypto.randomUUID()}`;
    expect(
      (await vep(["encode", SOURCE, "--preset", "mp4_264_720p", "--idempotency-key", key], { api, key: free.apiKey }))
        .code,
    ).toBe(0);
    const replay = await vep(["encode", SOURCE, "--preset", "mp4_264_720p", "--idempotency-key", key], {
      api,
      key: free.apiKey,
    });
    expect(replay.code).toBe(0);
    expect(replay.stdout).toMatch(
      /^job \S+ was already created with this --idempotency-key \(the first answer, replayed: no new job, no quota unit\)/,
    );
    const conflict = await vep(["encode", SOURCE, "--preset", "mp4_264_480p", "--idempotency-key", key], {
      api,
      key: free.apiKey,
    });
    expect(conflict.code).toBe(EXIT.conflict);
  });

  it("a timeline file over the size limit (413) is refused: 3, saying so", async () => {
    const { apiKey } = await newAccount("free");
    const big = join(dir, "too-big.json");
    await writeFile(big, JSON.stringify({ ...timeline(1), metadata: { pad: "x".repeat(4 * 1024 * 1024) } }));
    const res = await vep(["edl", "render", big], { api, key: apiKey });
    expect(res.code).toBe(EXIT.badRequest);
    expect(oneLine(res.stderr)).toMatch(/^vep: refused, too large: .*4 MiB.* \(HTTP 413\)$/);
  });

  it("a 500 from the service and no service at all: 10, retry with backoff", async () => {
    const { apiKey } = await newAccount("free");
    const failing = await vep(["jobs", "list"], { api: broken.url, key: apiKey });
    expect(failing.code).toBe(EXIT.unavailable);
    expect(oneLine(failing.stderr)).toMatch(
      /^vep: service error \(retry with backoff\): An unexpected error occurred\. Retry with backoff\. \(HTTP 500\) \(request id [0-9a-f-]{36}\)$/,
    );
    const nowhere = await vep(["presets"], { api: `http://127.0.0.1:${await freePort()}` });
    expect(nowhere.code).toBe(EXIT.unavailable);
    expect(oneLine(nowhere.stderr)).toMatch(
      /^vep: service unreachable \(retry with backoff\): The service could not be reached/,
    );
  });
});

describe("vep: local files, uploaded directly (docs/uploads.md)", () => {
  it("upload prints the inputUrl; encode of a local path uploads it, then makes the job from its inputUrl", async () => {
    const { apiKey } = await newAccount("free");
    const file = join(dir, "local clip.mp4");
    await writeFile(file, "a local video's bytes");
    const uploaded = await vep(["upload", file], { api, key: apiKey });
    expect(uploaded.code).toBe(0);
    expect(uploaded.stdout).toMatch(/^uploaded .*local clip\.mp4 \(21 bytes\) as upload [0-9a-f-]{36}\ninputUrl http/);
    const asJson = await vep<Upload>(["--json", "upload", file], { api, key: apiKey });
    expect(asJson.json).toMatchObject({ status: "completed", filename: "local clip.mp4", size: 21 });
    expect(await (await fetch(asJson.json.inputUrl as string)).text()).toBe("a local video's bytes");

    const created = await vep<CreatedJob>(["--json", "encode", file, "--preset", "mp4_264_480p"], {
      api,
      key: apiKey,
    });
    expect(created.code).toBe(0);
    expect(created.json.inputUrl).toMatch(/\/uploads\/[0-9a-f-]{36}\/[0-9a-f-]{36}\/source\?/);
    expect(await (await fetch(created.json.inputUrl)).text()).toBe("a local video's bytes");
  });

  it("the file's type is named from its extension, or given with --content-type; a type no job reads is refused (3)", async () => {
    const { apiKey } = await newAccount("free");
    const subtitles = join(dir, "talk.srt");
    await writeFile(subtitles, "1\n00:00:01,000 --> 00:00:02,000\nhello\n");
    const named = await vep<Upload>(["--json", "upload", subtitles], { api, key: apiKey });
    expect(named.json).toMatchObject({ status: "completed", contentType: "application/x-subrip" });
    const unnamed = join(dir, "take-3");
    await writeFile(unnamed, "a video with no extension");
    const given = await vep<Upload>(["--json", "upload", unnamed, "--content-type", "video/quicktime"], {
      api,
      key: apiKey,
    });
    expect(given.json).toMatchObject({ status: "completed", contentType: "video/quicktime" });
    for (const args of [[unnamed], [unnamed, "--content-type", "text/html"]]) {
      const refused = await vep(["upload", ...args], { api, key: apiKey });
      expect(refused.code, args.join(" ")).toBe(EXIT.badRequest);
      expect(refused.stderr, args.join(" ")).toMatch(
        /^vep: refused: Invalid request parameters \(contentType: must be/,
      );
    }
  });

  it("a path that is no file, or an empty one, is a usage error (2) before anything is sent", async () => {
    const { apiKey, accountId } = await newAccount("free");
    const empty = join(dir, "empty.mp4");
    await writeFile(empty, "");
    for (const path of [join(dir, "missing.mp4"), dir, empty]) {
      const res = await vep(["encode", path, "--preset", "mp4_264_480p"], { api, key: apiKey });
      expect(res.code, path).toBe(EXIT.usage);
      expect(res.stderr, path).toMatch(/^vep: .*(cannot read|not a file|the file is empty)/);
    }
    expect(await admin.db.select().from(uploads).where(eq(uploads.accountId, accountId))).toEqual([]);
  });

  it("a 1 GiB file goes up in parts with the CLI's memory bounded (its peak RSS under 300 MB)", async () => {
    const { apiKey } = await newAccount("pro");
    const file = join(dir, "large.bin");
    // Sparse: no 1 GiB written to make it; read as zeros.
    await writeFile(file, "");
    await truncate(file, 1024 ** 3);
    const child = spawn(process.execPath, [VEP_BIN, "--json", "upload", file, "--content-type", "video/mp4"], {
      env: vepEnv({ api, key: apiKey }),
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    child.stdout.on("data", (chunk: Buffer) => {
      stdout += chunk;
    });
    let peakKb = 0;
    const sample = setInterval(() => {
      readFile(`/proc/${child.pid}/status`, "utf8").then(
        (status) => {
          peakKb = Math.max(peakKb, Number(/VmHWM:\s+(\d+) kB/.exec(status)?.[1] ?? 0));
        },
        () => undefined,
      );
    }, 50);
    const [code] = await once(child, "exit");
    clearInterval(sample);
    expect(code).toBe(0);
    const upload = JSON.parse(stdout) as Upload;
    expect(upload).toMatchObject({ status: "completed", size: 1024 ** 3, contentType: "video/mp4" });
    expect(peakKb, `peak RSS ${Math.round(peakKb / 1024)} MB`).toBeGreaterThan(0);
    expect(peakKb / 1024, `peak RSS ${Math.round(peakKb / 1024)} MB`).toBeLessThan(300);
    await rm(file);
  });
});

/** vep running as a process, what it printed so far readable while it runs. */
function running(args: string[], key: string) {
  const child = spawn(process.execPath, [VEP_BIN, ...args], {
    env: vepEnv({ api, key }),
    stdio: ["ignore", "pipe", "pipe"],
  });
  const out = { stdout: "", stderr: "" };
  child.stdout.on("data", (chunk: Buffer) => {
    out.stdout += chunk;
  });
  child.stderr.on("data", (chunk: Buffer) => {
    out.stderr += chunk;
  });
  const exited = once(child, "exit").then(([code]) => code as number);
  let ended = false;
  void exited.then(() => {
    ended = true;
  });
  return {
    out,
    exited,
    ended: () => ended,
    /** The job it created, once its line is on stderr. */
    jobId: () =>
      vi.waitFor(
        () => {
          const id = /created job ([0-9a-f-]{36})/.exec(out.stderr)?.[1];
          if (!id) throw new Error(`no job yet: ${out.stderr}`);
          return id;
        },
        { timeout: 30_000, interval: 50 },
      ),
  };
}

describe("vep encode --play (docs/playback.md)", () => {
  it("prints the playback link on its own line on stdout while the job processes, then waits for its end", async () => {
    const { apiKey, accountId } = await newAccount("free");
    const vepRun = running(["encode", SOURCE, "--preset", "hls_abr_264_basic", "--play", "--interval", "0.2"], apiKey);
    const jobId = await vepRun.jobId();
    const claim = await claimStream(jobId);
    await reportSegments(jobId, claim, 0);
    const link = await vi.waitFor(
      () => {
        const line = vepRun.out.stdout.split("\n")[0];
        if (!vepRun.out.stdout.includes("\n")) throw new Error("no line yet");
        return line;
      },
      { timeout: 30_000, interval: 50 },
    );
    expect(link).toMatch(
      new RegExp(`^${api.replace(/\./g, "\\.")}/play/${jobId}/\\d+\\.[A-Za-z0-9_-]{43}/master\\.m3u8$`),
    );
    const master = await fetch(link);
    expect(master.status).toBe(200);
    expect(await master.text()).toMatch(/^#EXTM3U/);
    // The job is still processing, and vep still waits for it.
    expect(vepRun.ended()).toBe(false);

    await completeStream(jobId, accountId, claim);
    expect(await vepRun.exited).toBe(0);
    const [first, ...rest] = vepRun.out.stdout.trimEnd().split("\n");
    expect(first).toBe(link);
    expect(rest.join("\n")).toMatch(new RegExp(`^id\\s+${jobId}\\nstatus\\s+completed\\n`));
    expect(rest.join("\n")).toMatch(/\nplayback\s+http\S+\/master\.m3u8$/m);
  });

  it("--json: the link as one line of JSON, then the job; a job that fails before it plays prints no link and exits 11", async () => {
    const { apiKey, accountId } = await newAccount("free");
    const vepRun = running(
      ["--json", "encode", SOURCE, "--preset", "hls_abr_264_basic", "--play", "--interval", "0.2"],
      apiKey,
    );
    const jobId = await vi.waitFor(
      async () => {
        const [job] = (await admin.db.select().from(jobs).where(eq(jobs.accountId, accountId))).map((j) => j.id);
        if (!job) throw new Error("no job yet");
        return job;
      },
      { timeout: 30_000, interval: 50 },
    );
    const claim = await claimStream(jobId);
    await reportSegments(jobId, claim, 0);
    await completeStream(jobId, accountId, claim);
    expect(await vepRun.exited).toBe(0);
    const newline = vepRun.out.stdout.indexOf("\n");
    const announced = JSON.parse(vepRun.out.stdout.slice(0, newline));
    expect(announced).toEqual({ jobId, playbackUrl: expect.stringMatching(/\/master\.m3u8$/) });
    expect(JSON.parse(vepRun.out.stdout.slice(newline + 1))).toMatchObject({ id: jobId, status: "completed" });

    const failing = running(["encode", SOURCE, "--preset", "hls_abr_264_basic", "--play", "--interval", "0.2"], apiKey);
    const failingId = await failing.jobId();
    await failEveryAttempt(failingId, "Source could not be downloaded: HTTP 404");
    expect(await failing.exited).toBe(EXIT.jobFailed);
    expect(failing.out.stdout).toMatch(new RegExp(`^id\\s+${failingId}\\nstatus\\s+failed\\n`));
    expect(failing.out.stderr).toMatch(/vep: job \S+ failed: Source could not be downloaded: HTTP 404\n$/);
  });

  it("a preset that is not a stream is a usage error before the file is uploaded or a job created", async () => {
    const { apiKey, accountId } = await newAccount("free");
    const file = join(dir, "to-play.mp4");
    await writeFile(file, "a local video's bytes");
    const res = await vep(["encode", file, "--preset", "mp4_264_480p", "--play"], { api, key: apiKey });
    expect(res.code).toBe(EXIT.usage);
    expect(res.stderr).toMatch(/^vep: --play: preset mp4_264_480p is not a stream/);
    expect(await admin.db.select().from(uploads).where(eq(uploads.accountId, accountId))).toEqual([]);
    expect(await admin.db.select().from(jobs).where(eq(jobs.accountId, accountId))).toEqual([]);
  });
});
