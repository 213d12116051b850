import { Command, type CommanderError, Option } from "commander";
import {
  ApiError,
  createVepClient,
  DownloadError,
  DEFAULT_BASE_URL,
  DEFAULT_POLL_INTERVAL_MS,
  type Created,
  type CreatedEdlJob,
  type CreatedJob,
  type Job,
  NotPlayableError,
  type PlayableJob,
  TERMINAL_STATUSES,
  UnexpectedResponseError,
  type Upload,
  type VepClient,
  VepError,
} from "../client";
import { CliFailure, EXIT, EXIT_BY_KIND, LABEL_BY_KIND } from "./exit-codes";
import { assertWritableDestination, openUploadSource, parseJsonOption, readJsonFile, saveResponse } from "./files";
import {
  describeCreated,
  describeDetails,
  describeJob,
  describeJobList,
  describePresets,
  describeValidation,
} from "./output";
import { assertOutName, linkedOutput, presetOutput, timelineOutput } from "./out-name";
import { assertStreamingPreset } from "./play";
import { jobProgressBar, uploadProgressBar } from "./progress";
import { renderMetadata, timelineRequest } from "./timeline-file";

interface GlobalOptions {
  api: string;
  key?: string;
  json?: boolean;
}

interface WaitFlags {
  wait?: boolean;
  out?: string;
  /** Print the stream's playback link as soon as it plays, then wait (encode only). */
  play?: boolean;
  interval: string;
}

interface EncodeFlags extends WaitFlags {
  preset: string;
  metadata?: string;
  idempotencyKey?: string;
  contentType?: string;
}

const program = new Command("vep")
  .description("Encode videos and render timelines with the video encoding API.")
  .addOption(new Option("--api <url>", "the service's base URL").env("VEP_API_URL").default(DEFAULT_BASE_URL))
  .addOption(new Option("--key <apiKey>", "API key (spk_… or sk_…)").env("VEP_API_KEY"))
  .option("--json", "print the API's JSON on stdout, for scripts")
  // Commander's own error output (its message, then the whole help) gives way to fail's one line.
  .configureOutput({ writeErr: () => undefined });

const globals = () => program.opts<GlobalOptions>();
function client(): VepClient {
  try {
    return createVepClient({ baseUrl: globals().api, apiKey: globals().key });
  } catch (err) {
    throw new CliFailure(EXIT.usage, (err as Error).message);
  }
}

/** Whether the command has printed its result (a failed job, an invalid timeline): under --json, stdout holds one document. */
let printed = false;

function print(human: string, json: unknown) {
  process.stdout.write(globals().json ? `${JSON.stringify(json, null, 2)}\n` : `${human}\n`);
  printed = true;
}

function waitOptions<C extends Command>(command: C): C {
  return command
    .option("--wait", "wait for the job to finish, with a progress bar")
    .option(
      "--out <file>",
      "when it completes, download the output here (implies --wait); its extension, if any, must be the output's: .zip for a multi-file preset",
    )
    .option(
      "--interval <seconds>",
      "seconds between status reads while waiting",
      String(DEFAULT_POLL_INTERVAL_MS / 1000),
    );
}

function intervalMs(flags: WaitFlags): number {
  const seconds = Number(flags.interval);
  if (!Number.isFinite(seconds) || seconds <= 0)
    throw new CliFailure(EXIT.usage, "--interval must be a positive number of seconds");
  return seconds * 1000;
}

/** Runs `work` with a signal that Ctrl-C aborts, failing with `said` (exit 130) rather than ending the process mid-way. */
async function interruptible<T>(said: string, work: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const stop = new AbortController();
  const onSigint = () => stop.abort(new CliFailure(EXIT.interrupted, said));
  process.once("SIGINT", onSigint);
  try {
    return await work(stop.signal);
  } finally {
    process.off("SIGINT", onSigint);
  }
}

/**
 * Downloads a completed job's output to `path` (see saveResponse: never a partial file there),
 * once the signed link's file name shows that `path` names what it is.
 */
function download(api: VepClient, jobId: string, path: string): Promise<number> {
  return interruptible(`stopped the download; ${path} was not written`, async (signal) => {
    const response = await api.fetchOutput(jobId, { signal });
    try {
      // Not naming the job: once `encode --out` created it, fail's line adds how to find it.
      assertOutName(path, linkedOutput(response.url), "the job");
    } catch (err) {
      await response.body?.cancel();
      throw err;
    }
    return saveResponse(response, path, signal);
  });
}

/** Runs one wait of the job's with a progress bar on a terminal; Ctrl-C stops the waiting, not the job. */
async function withProgressBar<T>(
  jobId: string,
  wait: (signal: AbortSignal, onProgress: (job: Job) => void) => Promise<T>,
): Promise<T> {
  const bar = jobProgressBar(jobId);
  try {
    return await interruptible(`stopped waiting; the job goes on (vep jobs get ${jobId})`, (signal) =>
      wait(signal, (job) => bar.update(job)),
    );
  } finally {
    bar.stop();
  }
}

/**
 * Waits for the job's playback link and prints it on stdout the moment a read brings it, on a
 * line of its own (`{jobId, playbackUrl}` under --json), for a script to read while the job goes
 * on. Answers the read that ended the wait: with the link, or the job ended without one.
 */
async function printPlaybackLink(api: VepClient, jobId: string, everyMs: number): Promise<Job> {
  let playable: PlayableJob;
  try {
    playable = await withProgressBar(jobId, (signal, onProgress) =>
      api.waitForPlayable(jobId, { intervalMs: everyMs, signal, onProgress }),
    );
  } catch (err) {
    if (err instanceof NotPlayableError) return err.job;
    throw err;
  }
  const { playbackUrl } = playable;
  process.stdout.write(globals().json ? `${JSON.stringify({ jobId, playbackUrl })}\n` : `${playbackUrl}\n`);
  return playable;
}

/**
 * Waits with a progress bar (printing the playback link on the way with --play), downloads if
 * asked, prints the job.
 */
async function waitAndSave(api: VepClient, jobId: string, flags: WaitFlags, everyMs = intervalMs(flags)) {
  const seen = flags.play ? await printPlaybackLink(api, jobId, everyMs) : undefined;
  const job =
    seen && TERMINAL_STATUSES.includes(seen.status)
      ? seen
      : await withProgressBar(jobId, (signal, onProgress) =>
          api.waitForJob(jobId, { intervalMs: everyMs, signal, onProgress }),
        );
  let saved = "";
  if (job.status === "completed" && flags.out) {
    const bytes = await download(api, jobId, flags.out);
    saved = `saved ${flags.out} (${bytes} bytes)`;
    // Under --json stdout holds JSON alone: the job (after the playback link's line, with --play).
    if (globals().json) process.stderr.write(`${saved}\n`);
  }
  print(saved ? `${describeJob(job)}\n${saved}` : describeJob(job), job);
  if (job.status === "failed") throw new CliFailure(EXIT.jobFailed, `job ${jobId} failed: ${job.errorMessage}`);
  if (job.status === "cancelled") throw new CliFailure(EXIT.jobCancelled, `job ${jobId} was cancelled`);
  // A preset newer than this CLI's catalogue, found at the end not to be a stream.
  if (seen?.playbackUrl === null) throw new CliFailure(EXIT.usage, `--play: ${new NotPlayableError(job).message}`);
}

/** Creates the job only once the wait flags are good (a bad one costs no quota unit), then waits for it if asked. */
async function createThenWait<T extends Created<CreatedJob | CreatedEdlJob>>(
  flags: WaitFlags,
  create: (api: VepClient) => Promise<T>,
  onCreated: (created: T) => void = () => undefined,
) {
  const everyMs = intervalMs(flags);
  if (flags.out) await assertWritableDestination(flags.out);
  const api = client();
  const created = await create(api);
  onCreated(created);
  if (!flags.wait && !flags.out && !flags.play) return print(describeCreated(created), created);
  if (!globals().json) process.stderr.write(`${describeCreated(created)}\n`);
  try {
    await waitAndSave(api, created.id, flags, everyMs);
  } catch (err) {
    throw new AfterCreation(created.id, err);
  }
}

/**
 * A failure once the job exists (while waiting or downloading): the job's id goes with it, so
 * that a script told to retry does not create a second job, under --json as in the message.
 */
class AfterCreation extends Error {
  constructor(
    readonly jobId: string,
    override readonly cause: unknown,
  ) {
    super(`after job ${jobId} was created`);
  }
}

/**
 * Uploads a local file directly (docs/uploads.md), with a progress bar on a terminal; Ctrl-C stops
 * it (the upload is left pending, and the service abandons it at its expiry).
 */
async function uploadFile(api: VepClient, path: string, contentType: string | undefined): Promise<Upload> {
  const { blob, filename } = await openUploadSource(path);
  const bar = uploadProgressBar(filename);
  try {
    return await interruptible(`stopped uploading ${path}`, (signal) =>
      api.upload(blob, { filename, contentType, signal, onProgress: (p) => bar.update(p) }),
    );
  } finally {
    bar.stop();
  }
}

/** A source is a URL as the API takes it; anything else names a local file, uploaded first. */
const isUrl = (source: string) => /^https?:\/\//i.test(source);

/** The type of a local file uploaded: by default the service names it from the file's extension (docs/uploads.md). */
const CONTENT_TYPE_OPTION = [
  "--content-type <type>",
  "the file's media type, for a name whose extension does not say (video/*, audio/*, image/png, image/jpeg, text/vtt, application/x-subrip)",
] as const;

program
  .command("upload <file>")
  .description("upload a local file; prints its inputUrl, a source for jobs and timelines")
  .option(...CONTENT_TYPE_OPTION)
  .action(async (file: string, flags: { contentType?: string }) => {
    const upload = await uploadFile(client(), file, flags.contentType);
    print(`uploaded ${file} (${upload.size} bytes) as upload ${upload.id}\ninputUrl ${upload.inputUrl}`, upload);
  });

waitOptions(
  program
    .command("encode <source>")
    .description("encode a video with a preset: a public URL, or a local file (uploaded first)")
    .requiredOption("--preset <id>", "preset identifier (see `vep presets`)")
    .option("--metadata <json>", "a JSON object stored with the job")
    .option("--idempotency-key <key>", "makes retrying this command safe: the same key never creates a second job")
    .option(...CONTENT_TYPE_OPTION)
    .option(
      "--play",
      "print the stream's playback link on a line of its own as soon as it plays, while the job encodes, then wait for the job (implies --wait); streaming presets only: hls_*, dash_*, cmaf_*, live_*",
    ),
).action(async (url: string, flags: EncodeFlags) => {
  const metadata =
    flags.metadata === undefined ? undefined : (parseJsonOption("metadata", flags.metadata) as Record<string, unknown>);
  assertOutName(flags.out, presetOutput(flags.preset), `preset ${flags.preset}`);
  if (flags.play) assertStreamingPreset(flags.preset);
  await createThenWait(flags, async (api) => {
    const inputUrl = isUrl(url) ? url : (await uploadFile(api, url, flags.contentType)).inputUrl;
    if (!inputUrl) throw new CliFailure(EXIT.unexpected, `the upload of ${url} gave no inputUrl`);
    return api.createJob({ inputUrl, preset: flags.preset, metadata }, { idempotencyKey: flags.idempotencyKey });
  });
});

const edl = program.command("edl").description("timelines (EDL documents)");

edl
  .command("validate <file>")
  .description("check a timeline against the rules and your plan; exits 3 when it is invalid")
  .action(async (file: string) => {
    const result = await client().validateEdl(timelineRequest(await readJsonFile(file)).edl);
    print(describeValidation(result), result);
    if (!result.valid) throw new CliFailure(EXIT.badRequest, `${file}: the timeline is invalid`);
  });

waitOptions(
  edl
    .command("render <file>")
    .description("render a timeline (the EDL document, or a request body {edl, metadata}) as a job")
    .option("--name <name>", "a name stored with the job (replaces the file's metadata.name)")
    .option("--description <text>", "a description stored with the job (replaces the file's metadata.description)")
    .option("--idempotency-key <key>", "makes retrying this command safe"),
).action(async (file: string, flags: WaitFlags & { name?: string; description?: string; idempotencyKey?: string }) => {
  const request = timelineRequest(await readJsonFile(file));
  const metadata = renderMetadata(request.metadata, { name: flags.name, description: flags.description });
  assertOutName(flags.out, timelineOutput(request.edl), "the timeline");
  await createThenWait(
    flags,
    (api) => api.createEdlJob({ edl: request.edl, metadata }, { idempotencyKey: flags.idempotencyKey }),
    (created) => {
      for (const warning of created.warnings ?? []) process.stderr.write(`warning: ${warning}\n`);
    },
  );
});

const jobs = program.command("jobs").description("your jobs");

jobs
  .command("list")
  .description("list jobs, newest first")
  .option("--status <status>", "only jobs with this status")
  .option("--preset <id>", "only jobs with this preset")
  .option("--page <n>", "page number", "1")
  .option("--limit <n>", "jobs per page (at most 100)", "10")
  .action(async (flags: { status?: string; preset?: string; page: string; limit: string }) => {
    const list = await client().listJobs({
      status: flags.status,
      preset: flags.preset,
      page: Number(flags.page),
      limit: Number(flags.limit),
    });
    print(describeJobList(list), list);
  });

jobs
  .command("get <id>")
  .description("show a job")
  .action(async (id: string) => {
    const job = await client().getJob(id);
    print(describeJob(job), job);
  });

waitOptions(jobs.command("wait <id>").description("wait for a job to finish")).action(
  async (id: string, flags: WaitFlags) => {
    await waitAndSave(client(), id, flags);
  },
);

jobs
  .command("cancel <id>")
  .description("cancel a queued or processing job")
  .action(async (id: string) => {
    const result = await client().cancelJob(id);
    print(`${result.message} (${result.id}, ${result.cancelledAt})`, result);
  });

jobs
  .command("download <id>")
  .description("download a completed job's output")
  .requiredOption(
    "--out <file>",
    "where to write it; its extension, if any, must be the output's: .zip for a multi-file preset",
  )
  .action(async (id: string, flags: { out: string }) => {
    await assertWritableDestination(flags.out);
    const bytes = await download(client(), id, flags.out);
    print(`saved ${flags.out} (${bytes} bytes)`, { jobId: id, file: flags.out, bytes });
  });

program
  .command("presets")
  .description("list the presets, and which your plan includes")
  .action(async () => {
    const catalogue = await client().listPresets();
    print(describePresets(catalogue), catalogue);
  });

/** Commander's refusal of the arguments, with the command that refused them, whose `--help` the line points to. */
class ArgumentError extends Error {
  constructor(
    readonly command: Command,
    override readonly cause: CommanderError,
  ) {
    super(cause.message);
  }
}

/** Every command throws its refusals (and its help's end) instead of ending the process, naming itself. */
function throwArgumentErrors(command: Command) {
  command.exitOverride((err) => {
    throw new ArgumentError(command, err);
  });
  command.commands.forEach(throwArgumentErrors);
}

/** `vep jobs list`, for a hint the user can run. */
function commandLine(command: Command): string {
  return command.parent ? `${commandLine(command.parent)} ${command.name()}` : command.name();
}

/** Under --json, a failure's document on stdout: `{error: {kind, retryable, message, …}, jobId?}`. */
function printError(error: Record<string, unknown>, jobId?: string) {
  process.stdout.write(`${JSON.stringify({ error, ...(jobId ? { jobId } : {}) })}\n`);
}

/** Commander's refusal of the arguments in one line, without its "error: " prefix or a closing full stop, for the hint that follows. */
function usageMessage(err: CommanderError): string {
  // A command given without its subcommand: commander's message is "(outputHelp)", for the help it would print.
  if (err.code === "commander.help") return "a command is needed";
  return err.message
    .replace(/^error: /, "")
    .replace(/\s*\n\s*/g, " ")
    .trim()
    .replace(/\.$/, "");
}

/**
 * One line on stderr, the class's exit code, and with --json the error as JSON on stdout (with
 * the job's id once one was created).
 */
function fail(failure: unknown): number {
  const json = program.opts<GlobalOptions>().json;
  const jobId = failure instanceof AfterCreation ? failure.jobId : undefined;
  const err = failure instanceof AfterCreation ? failure.cause : failure;
  const ofJob =
    jobId && !(err instanceof Error && err.message.includes(jobId))
      ? `; job ${jobId} was created (vep jobs get ${jobId})`
      : "";
  const report = (line: string, error: Record<string, unknown>) => {
    process.stderr.write(`vep: ${line}${ofJob}\n`);
    if (json && !printed) printError(error, jobId);
  };
  if (err instanceof VepError) {
    const status = err instanceof ApiError ? ` (HTTP ${err.status})` : "";
    const hint =
      err.kind === "unauthorized" && !program.opts<GlobalOptions>().key ? "; pass --key or set VEP_API_KEY" : "";
    const details = err instanceof ApiError ? describeDetails(err.body) : "";
    // What support needs to find the failure in the service's logs.
    const requestId = err instanceof ApiError && err.requestId ? ` (request id ${err.requestId})` : "";
    report(`${LABEL_BY_KIND[err.kind]}: ${err.message}${details}${status}${requestId}${hint}`, {
      kind: err.kind,
      retryable: err.retryable,
      message: err.message,
      ...(err instanceof ApiError
        ? { status: err.status, body: err.body }
        : err instanceof DownloadError || err instanceof UnexpectedResponseError
          ? { status: err.status }
          : {}),
    });
    return EXIT_BY_KIND[err.kind];
  }
  if (err instanceof ArgumentError) {
    const message = usageMessage(err.cause);
    report(`usage: ${message}; see ${commandLine(err.command)} --help`, {
      kind: "usage",
      retryable: false,
      message,
      exitCode: EXIT.usage,
    });
    return EXIT.usage;
  }
  if (err instanceof CliFailure) {
    report(err.message, { kind: "cli", retryable: false, message: err.message, exitCode: err.exitCode });
    return err.exitCode;
  }
  report(`unexpected failure: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`, {
    kind: "unexpected",
    retryable: false,
    message: String(err),
  });
  return EXIT.unexpected;
}

throwArgumentErrors(program);

export async function main(argv: string[]): Promise<number> {
  try {
    await program.parseAsync(argv);
    return EXIT.ok;
  } catch (err) {
    // --help and `vep help` end the same way, having printed the help.
    if (err instanceof ArgumentError && err.cause.exitCode === 0) return EXIT.ok;
    return fail(err);
  }
}
