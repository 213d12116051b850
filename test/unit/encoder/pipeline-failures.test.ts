import { mkdtemp, readdir, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { JOB_DELIVERY_RETRIES } from "../../../domain/jobs";
import { JobFailure } from "../../../encoder/failure";
import type { ClaimedJob, InternalApi } from "../../../encoder/internal-api";
import { processDelivery, type PipelineDeps } from "../../../encoder/jobs/pipeline";
import type { Uploader } from "../../../encoder/upload/s3";
import { jobsOnly } from "../../support/jobs-only";

/**
 * What the pipeline tells the Worker when a render fails: the failure's message, whether another
 * attempt at the source may meet something else, and the duration it carries. The Worker
 * decides whether a retry follows (and dispatches it): the stand-in decides as it does. Only the
 * encoder's collaborators (the Worker's internal API, the renderer, the uploader) stand in.
 */
const jobId = "3c9e1f7a-2b4d-4e6f-8a1b-5c7d9e0f1a2b";
let workRoot: string;

beforeAll(async () => {
  workRoot = await mkdtemp(join(tmpdir(), "pipeline-failures-"));
});
afterAll(() => rm(workRoot, { recursive: true, force: true }));

type FailReport = { errorMessage: string; retryable: boolean; duration?: number | null };

async function deliverFailing(thrown: unknown, attempt: number, root = workRoot) {
  const reports: FailReport[] = [];
  const lines: string[] = [];
  const api = {
    claim: async (id: string): Promise<ClaimedJob> => ({
      id,
      attempt,
      claim: 1,
      accountId: "acct",
      preset: "mp4_264_720p",
      inputUrl: "https://media.example.com/a.mp4",
      edl: null,
      plan: "free",
      maxSourceSeconds: 600,
    }),
    heartbeat: async () => ({ status: "processing" }),
    complete: async () => expect.unreachable("a failed render is not completed"),
    fail: async (_id: string, _claim: number, body: FailReport) => {
      reports.push(body);
      return { status: body.retryable && attempt < JOB_DELIVERY_RETRIES ? "queued" : "failed" };
    },
  } as unknown as InternalApi;
  const deps: PipelineDeps = {
    api,
    uploader: { uploadFile: async () => 1, uploadStream: async () => 1 } as unknown as Uploader,
    render: jobsOnly(async () => {
      throw thrown;
    }),
    workRoot: root,
    heartbeatMs: 60_000,
    encoderName: "encoder-test",
    log: (line) => lines.push(line),
  };
  const result = await processDelivery(deps, { jobId, dispatch: attempt });
  expect(reports).toHaveLength(1);
  return { result, report: reports[0], failedLine: lines.find((l) => l.includes(" failed ")) };
}

describe("a failed render, as the pipeline reports it", () => {
  it("a retryable failure: reported as such, and the delivery is settled (the Worker dispatches the retry)", async () => {
    const { result, report, failedLine } = await deliverFailing(JobFailure.download("the source answered HTTP 503"), 0);
    expect(result).toBe("done");
    expect(report).toEqual({
      errorMessage: "Download failed: the source answered HTTP 503",
      retryable: true,
      duration: null,
    });
    expect(failedLine).toMatch(/attempt 1 of 3, will be retried: Download failed: the source answered HTTP 503$/);
  });

  it("a retryable failure on the last attempt: the Worker fails the job, and the log says so", async () => {
    const { result, report, failedLine } = await deliverFailing(
      JobFailure.ffmpeg("FFmpeg produced no output files."),
      2,
    );
    expect(result).toBe("done");
    expect(report).toMatchObject({ errorMessage: "FFmpeg produced no output files.", retryable: true });
    expect(failedLine).toMatch(/attempt 3 of 3, not retried: FFmpeg produced no output files\.$/);
  });

  it("DURATION_EXCEEDED is final at once and records the source's duration on the job", async () => {
    const { result, report } = await deliverFailing(JobFailure.durationExceeded(660, 600, "Starter"), 0);
    expect(result).toBe("done");
    expect(report).toEqual({
      errorMessage: expect.stringMatching(/^DURATION_EXCEEDED: /),
      retryable: false,
      duration: 660,
    });
  });

  it("a failure's cause goes to the log line, never to the job", async () => {
    const cause = Object.assign(new Error("connect ECONNREFUSED 10.1.2.3:443"), { code: "ECONNREFUSED" });
    const { report, failedLine } = await deliverFailing(JobFailure.download("connection refused", cause), 0);
    expect(report.errorMessage).toBe("Download failed: connection refused");
    expect(failedLine).toMatch(
      /Download failed: connection refused \[cause: Error: connect ECONNREFUSED 10\.1\.2\.3:443\]$/,
    );
  });

  it("an error no code expected: retried as an internal error, its own words only in the log", async () => {
    const { result, report, failedLine } = await deliverFailing(
      new TypeError("Cannot read properties of undefined (reading '/srv/work')"),
      1,
    );
    expect(result).toBe("done");
    expect(report).toEqual({
      errorMessage: "Encoding failed because of an internal encoder error.",
      retryable: true,
      duration: null,
    });
    expect(failedLine).toContain("[cause: TypeError: Cannot read properties of undefined (reading '/srv/work')]");
  });

  it("a work root removed while the encoder runs is made again; one that cannot hold a work dir fails the attempt, retried, instead of leaving the claimed job unreported", async () => {
    const removed = join(workRoot, "emptied-by-a-cleaner");
    const { report } = await deliverFailing(JobFailure.ffmpeg("FFmpeg produced no output files."), 0, removed);
    expect(report.errorMessage).toBe("FFmpeg produced no output files.");
    expect(await readdir(removed)).toEqual([]);
    await rm(removed, { recursive: true });

    const notADirectory = join(workRoot, "a-file");
    await writeFile(notADirectory, "");
    const {
      result,
      report: unwritable,
      failedLine,
    } = await deliverFailing(new Error("never rendered: there is no work dir"), 0, notADirectory);
    expect(result).toBe("done");
    expect(unwritable).toEqual({
      errorMessage: "Encoding failed because of an internal encoder error.",
      retryable: true,
      duration: null,
    });
    expect(failedLine).toMatch(/\[cause: Error: E(EXIST|NOTDIR)/);
    await rm(notADirectory);
  });

  it("leaves no work dir behind", async () => {
    await deliverFailing(JobFailure.sourceRefused("not a valid URL"), 0);
    expect(await readdir(workRoot)).toEqual([]);
  });
});
