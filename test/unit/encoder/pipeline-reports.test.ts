import { mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { partOutputKey, type SplitPlan } from "../../../domain/split";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { InternalApiError, JobGoneError, type ClaimedJob, type InternalApi } from "../../../encoder/internal-api";
import { processDelivery, type PipelineDeps } from "../../../encoder/jobs/pipeline";
import { headStart } from "../../../encoder/split/head-start";
import { keptScratch } from "../../../encoder/split/kept-scratch";
import type { Uploader } from "../../../encoder/upload/s3";
import { jobsOnly } from "../../support/jobs-only";
import { timerTurns } from "../../support/barriers";

/**
 * What the pipeline does when the Worker does not take a claim or a report (its own retries,
 * in the internal API client, spent): the job's work is not what failed, so it is never
 * reported as a failure of the job; the delivery is answered with an error and QStash delivers
 * it again. Only the encoder's collaborators stand in.
 */
const jobId = "7e6d5c4b-3a29-4817-a6b5-c4d3e2f1a0b9";
let workRoot: string;

beforeAll(async () => {
  workRoot = await mkdtemp(join(tmpdir(), "pipeline-reports-"));
});
afterAll(() => rm(workRoot, { recursive: true, force: true }));

const claimed = (id: string): ClaimedJob => ({
  id,
  attempt: 0,
  claim: 1,
  accountId: "acct",
  preset: "mp4_264_720p",
  inputUrl: "https://media.example.com/a.mp4",
  edl: null,
  plan: "free",
  maxSourceSeconds: 600,
});

function pipeline(api: Partial<InternalApi>) {
  const calls: string[] = [];
  const lines: string[] = [];
  const deps: PipelineDeps = {
    api: {
      claim: async (id: string) => {
        calls.push("claim");
        return claimed(id);
      },
      heartbeat: async () => {
        calls.push("heartbeat");
        return { status: "processing" };
      },
      complete: async () => {
        calls.push("complete");
        return { status: "completed" };
      },
      fail: async () => {
        calls.push("fail");
        return { status: "queued" };
      },
      ...api,
    } as InternalApi,
    uploader: { uploadFile: async () => 1, uploadStream: async () => 1 } as unknown as Uploader,
    render: jobsOnly(async (_job, ctx) => {
      const path = join(ctx.workDir, "out.mp4");
      await writeFile(path, "output");
      return { output: { kind: "file", path, fileName: "out.mp4", contentType: "video/mp4" }, duration: 2 };
    }),
    workRoot,
    heartbeatMs: 20,
    encoderName: "encoder-test",
    log: (line) => lines.push(line),
  };
  return { deps, calls, lines };
}

const workerDown = () => new InternalApiError("/jobs/x/complete", 503, { error: "Internal server error" });

describe("reports the Worker did not take", () => {
  it("a completion the Worker never took is not reported as a failure: the delivery errs and QStash delivers it again", async () => {
    const { deps, calls, lines } = pipeline({
      complete: async () => {
        throw workerDown();
      },
    });
    await expect(processDelivery(deps, { jobId: jobId, dispatch: 0 })).rejects.toBeInstanceOf(InternalApiError);
    expect(calls).not.toContain("fail");
    expect(lines.filter((l) => / failed /.test(l))).toEqual([]);
    expect(await readdir(workRoot)).toEqual([]);
  });

  it("the heartbeat goes on while a report waits for the Worker, so the sweep does not take the job for abandoned", async () => {
    const { deps, calls } = pipeline({});
    // The Worker answers the report only once a beat has come in while it waited.
    deps.api.complete = async () => {
      calls.push("complete");
      await vi.waitFor(() => expect(calls.slice(calls.indexOf("complete"))).toContain("heartbeat"), {
        timeout: 30_000,
        interval: 5,
      });
      calls.push("completed");
      return { status: "completed" };
    };
    await expect(processDelivery(deps, { jobId: jobId, dispatch: 0 })).resolves.toBe("done");
    const during = calls.slice(calls.indexOf("complete"), calls.indexOf("completed"));
    expect(during.filter((c) => c === "heartbeat").length).toBeGreaterThan(0);
    // Stopped once the report is in: the heartbeat's interval (set before this ticker) has its turns, and sends nothing.
    const after = calls.length;
    const turns = timerTurns(deps.heartbeatMs);
    try {
      await turns.passed(5);
    } finally {
      turns.stop();
    }
    expect(calls.length).toBe(after);
  });

  it("a failure report the Worker never took errs the delivery too, so the attempt is not lost", async () => {
    const { deps, calls } = pipeline({
      fail: async () => {
        throw workerDown();
      },
    });
    deps.render = jobsOnly(async () => {
      throw new Error("boom");
    });
    await expect(processDelivery(deps, { jobId: jobId, dispatch: 0 })).rejects.toBeInstanceOf(InternalApiError);
    expect(calls).not.toContain("complete");
  });

  it("a job gone by the time of the report (cancelled) ends the delivery quietly", async () => {
    const { deps, lines } = pipeline({
      complete: async () => {
        throw new JobGoneError("cancelled");
      },
    });
    await expect(processDelivery(deps, { jobId: jobId, dispatch: 0 })).resolves.toBe("done");
    expect(lines.at(-1)).toMatch(/cancelled +on encoder-test {2}the job is cancelled; work stopped$/);
  });

  it("a claim refused because another encoder still holds the job asks QStash to deliver again; one refused for a job that ended settles the delivery", async () => {
    for (const [status, result] of [
      ["processing", "retry"],
      ["cancelled", "done"],
      ["queued", "done"],
    ] as const) {
      const { deps, calls } = pipeline({
        claim: async () => {
          throw new JobGoneError(status);
        },
      });
      await expect(processDelivery(deps, { jobId, dispatch: 0 }), status).resolves.toBe(result);
      expect(calls).toEqual([]);
    }
    expect(await readdir(workRoot)).toEqual([]);
  });

  it("a claim the Worker never took starts no work: the delivery errs and QStash delivers it again", async () => {
    let rendered = false;
    const { deps, calls } = pipeline({
      claim: async () => {
        throw workerDown();
      },
    });
    deps.render = jobsOnly(async () => {
      rendered = true;
      throw new Error("not reached");
    });
    await expect(processDelivery(deps, { jobId: jobId, dispatch: 0 })).rejects.toBeInstanceOf(InternalApiError);
    expect(rendered).toBe(false);
    expect(calls).toEqual([]);
    expect(await readdir(workRoot)).toEqual([]);
  });
});

describe("a job handed off in parts (docs/scaling.md)", () => {
  it("a heartbeat refused because the Worker already holds the parts does not turn the split into a cancel", async () => {
    let splitAnswered: () => void = () => undefined;
    const answered = new Promise<void>((r) => (splitAnswered = r));
    const { deps, calls, lines } = pipeline({
      // The Worker took the split: the job's own beats are refused from then on, one landing before the split's answer.
      heartbeat: async () => {
        // Answered once the refusal has been dealt with: every promise reaction it set off has run.
        setImmediate(splitAnswered);
        throw new JobGoneError("processing");
      },
    });
    deps.render = jobsOnly(async () => {
      await answered;
      return { handedOff: { parts: 4, audio: true, reads: "ranges" }, duration: 120 };
    });
    expect(await processDelivery(deps, { jobId, dispatch: 0 })).toBe("done");
    expect(
      lines.some((line) => / {2}split {4,}on encoder-test {2}into 4 parts and the audio /.test(line)),
      lines.join("\n"),
    ).toBe(true);
    expect(lines.some((line) => /cancelled/.test(line))).toBe(false);
    expect(calls).not.toContain("fail");
  });

  it("a part's encoded output, once stored, is kept on this disk with storage's tag, for a join that comes here", async () => {
    const plan = { parts: [{ index: 0 }, { index: 1 }], audio: false } as unknown as SplitPlan;
    const completed: string[] = [];
    const { deps } = pipeline({
      claimPart: async () => ({
        jobId,
        claim: 1,
        attempt: 0,
        accountId: "acct",
        preset: "mp4_264_720p",
        inputUrl: "https://media.example.com/source.mp4",
        plan,
        part: plan.parts[1],
      }),
      partHeartbeat: async () => ({ status: "processing" }),
      completePart: async (_id, _index, _claim, key) => {
        completed.push(key);
        return { status: "done" };
      },
    });
    deps.uploader = {
      storeFile: async (_key: string, path: string) => ({ bytes: (await readFile(path)).length, etag: '"stored"' }),
    } as unknown as Uploader;
    deps.kept = await keptScratch(join(workRoot, "kept"));
    deps.render = {
      ...jobsOnly(async () => {
        throw new Error("not a job");
      }),
      part: async (_part, ctx) => {
        const path = join(ctx.workDir, "part.nut");
        await writeFile(path, "part one's frames");
        return { path };
      },
    };
    expect(await processDelivery(deps, { jobId, dispatch: 1, part: 1 })).toBe("done");
    expect(completed).toEqual([partOutputKey(jobId, 1)]);
    // The part's work dir is gone; the kept file is not, and storage's tag is the one it was stored with.
    const taken = await deps.kept.take(partOutputKey(jobId, 1), async () => '"stored"');
    expect(await readFile(taken!.path, "utf8")).toBe("part one's frames");
    await taken!.release();
    await rm(join(workRoot, "kept"), { recursive: true });
  });

  it("the kept part's delivery refused its claim (another encoder holds the part): the encode begun for it is stopped", async () => {
    const { deps } = pipeline({
      claimPart: async () => {
        throw new JobGoneError("processing");
      },
    });
    let encodeSignal: AbortSignal | undefined;
    const head = headStart(join(workRoot, "0.out.nut"), ({ signal }) => {
      encodeSignal = signal;
      return new Promise((_resolve, reject) => signal.addEventListener("abort", () => reject(signal.reason)));
    });
    deps.render = jobsOnly(async (_job, ctx) => {
      ctx.alongside?.({ jobId, dispatch: 1, part: 0 }, head);
      return { handedOff: { parts: 4, audio: true, reads: "ranges" }, duration: 120 };
    });
    // The job's delivery answers once the work beside it is done.
    expect(await processDelivery(deps, { jobId, dispatch: 0 })).toBe("done");
    expect(encodeSignal?.aborted).toBe(true);
  });
});
