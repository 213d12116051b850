import type { Job } from "../../../drizzle/schema";
import { isCancellable } from "../../../domain/jobs";
import type { PlaybackLink } from "../../lib/playback-links";
import type { SignedLink } from "../../services/storage";
import { onThisOrigin, playbackOf, readableOutputKey, streamPlayerOf, type Playback } from "../lib/playback";
import { paths } from "../paths";
import { formatDuration, formatPercent, formatTime } from "./format";
import { Notice } from "./layout";

export const JOBS_PER_PAGE = 20;

/** When a job stopped: completed, cancelled, or failed (its last report). */
function finishedAt(job: Job): Date | null {
  if (job.status === "completed") return job.completedAt;
  if (job.status === "cancelled") return job.cancelledAt;
  if (job.status === "failed") return job.lastCheckedAt;
  return null;
}

function Thumbnail(props: { job: Job; playback: Playback }) {
  const { job, playback } = props;
  // A poster frame from the output itself: the browser fetches only what it needs for the first frames.
  if (playback.kind === "video")
    return <video class="thumb" preload="metadata" muted playsinline src={`${paths.output(job.id)}#t=1`}></video>;
  if (playback.kind === "hls")
    return (
      <video
        class="thumb"
        muted
        playsinline
        data-hls-src={paths.file(job.id, playback.master)}
        data-thumbnail="true"
      ></video>
    );
  if (playback.kind === "audio") return <span class="thumb audio">♪</span>;
  return <span class="thumb"></span>;
}

function Status(props: { job: Job }) {
  const { job } = props;
  return (
    <span class="status-cell">
      <span class={`status ${job.status}`}>{job.status}</span>
      {job.status === "processing" ? (
        <>
          {" "}
          <progress max={1} value={job.progress ?? 0}></progress> {formatPercent(job.progress ?? 0)}
        </>
      ) : null}
    </span>
  );
}

/** A processing job whose stream plays already: the list says so, and its page plays it. */
function Watchable(props: { job: Job }) {
  const { job } = props;
  if (job.status !== "processing" || !job.playableAt || !streamPlayerOf(job.preset)) return null;
  return (
    <a class="watch" href={paths.job(job.id)}>
      ▶ Watch while it encodes
    </a>
  );
}

function JobRow(props: { job: Job }) {
  const { job } = props;
  const playback = playbackOf(job);
  return (
    <tr data-job-id={job.id} data-status={job.status}>
      <td>
        <Thumbnail job={job} playback={playback} />
      </td>
      <td>
        <a href={paths.job(job.id)}>{job.preset}</a>
      </td>
      <td>
        <Status job={job} />
        <Watchable job={job} />
        {job.errorMessage ? <div class="error-text">{job.errorMessage}</div> : null}
      </td>
      <td>{formatDuration(job.duration)}</td>
      <td>{formatTime(job.createdAt)}</td>
      <td>{formatTime(finishedAt(job))}</td>
      <td>
        {readableOutputKey(job) !== null ? (
          <a class="button" href={paths.download(job.id)} data-download>
            Download
          </a>
        ) : null}
      </td>
    </tr>
  );
}

/** The list and its pager: also served alone (GET /jobs/table) for the page's refresh. */
export function JobsTable(props: { jobs: Job[]; page: number; totalPages: number }) {
  const active = props.jobs.some((j) => isCancellable(j.status));
  return (
    <div id="jobs" data-refresh={`${paths.jobsTable}?page=${props.page}`} data-active={String(active)}>
      {props.jobs.length === 0 ? (
        <p>No jobs yet. Jobs created with any of this account's keys appear here.</p>
      ) : (
        <table>
          <thead>
            <tr>
              <th></th>
              <th>Preset</th>
              <th>Status</th>
              <th>Duration</th>
              <th>Created</th>
              <th>Finished</th>
              <th></th>
            </tr>
          </thead>
          <tbody>
            {props.jobs.map((job) => (
              <JobRow job={job} />
            ))}
          </tbody>
        </table>
      )}
      {props.totalPages > 1 ? (
        <nav class="pager">
          {props.page > 1 ? <a href={`${paths.jobs}?page=${props.page - 1}`}>← Newer</a> : null}
          <span>
            Page {props.page} of {props.totalPages}
          </span>
          {props.page < props.totalPages ? <a href={`${paths.jobs}?page=${props.page + 1}`}>Older →</a> : null}
        </nav>
      ) : null}
    </div>
  );
}

function Player(props: { job: Job; playback: Playback; stream: PlaybackLink | null }) {
  const { job, playback, stream } = props;
  // biome-ignore-start lint/a11y/useMediaCaption: the player shows the job's own output, which has no caption file to point a track at.
  if (stream) {
    const src = onThisOrigin(stream.url);
    return streamPlayerOf(job.preset) === "dash" ? (
      <video
        id="player"
        controls
        playsinline
        data-dash-src={src}
        data-dash-module={paths.asset("dash.all.min.js")}
      ></video>
    ) : (
      <video id="player" controls playsinline data-hls-src={src}></video>
    );
  }
  switch (playback.kind) {
    case "video":
      return <video id="player" controls preload="metadata" playsinline src={paths.output(job.id)}></video>;
    case "audio":
      return <audio id="player" controls preload="metadata" src={paths.output(job.id)}></audio>;
    case "hls":
      return <video id="player" controls playsinline data-hls-src={paths.file(job.id, playback.master)}></video>;
    // biome-ignore-end lint/a11y/useMediaCaption: the outputs above, each without a caption file.
    case "none":
      return job.status === "completed" ? (
        <p class="hint">This output is a package the browser cannot play here; download it.</p>
      ) : null;
  }
}

/**
 * What the page plays, and of a stream its link: a job with a playback link plays its stream
 * through it (from the start, while it still encodes); one without plays its output.
 */
function PlayerCard(props: { job: Job; playback: Playback; stream: PlaybackLink | null }) {
  const { job, playback, stream } = props;
  const active = isCancellable(job.status);
  if (!stream) {
    if (active && streamPlayerOf(job.preset))
      return (
        <section class="card player">
          <p class="hint" id="stream-waiting">
            The stream plays here from the start as soon as each rendition has its first segment, while the job encodes.
          </p>
        </section>
      );
    if (playback.kind === "none" && job.status !== "completed") return null;
  }
  return (
    <section class="card player">
      <Player job={job} playback={playback} stream={stream} />
      {/* What the page's refresh replaces around a player that plays on (assets/dashboard.js). */}
      <div data-part="player-notes">
        {stream ? (
          <>
            {active ? (
              <p class="hint">
                Playing from the start while the job encodes: the stream grows as its segments are stored.
              </p>
            ) : null}
            <p class="hint">
              Playback link (any HLS or DASH player opens it as it is, with no key or session; works until{" "}
              {formatTime(stream.expiresAt)}):
            </p>
            <div class="secret">
              <code id="playback-link">{stream.url}</code>
              <button type="button" data-copy="#playback-link">
                Copy
              </button>
            </div>
          </>
        ) : null}
      </div>
    </section>
  );
}

/**
 * The job's details and its player: the page's body, and also served alone (GET /jobs/:id/panel)
 * for the page's refresh while the job runs, which keeps the player that is playing.
 */
export function JobPanel(props: { job: Job; link: SignedLink | null; stream: PlaybackLink | null }) {
  const { job } = props;
  return (
    <div id="job-panel" data-refresh={paths.jobPanel(job.id)}>
      <section class="card" data-part="details">
        <dl id="job" data-active={String(isCancellable(job.status))}>
          <dt>Job</dt>
          <dd>
            <code>{job.id}</code>
          </dd>
          <dt>Preset</dt>
          <dd>{job.preset}</dd>
          <dt>Status</dt>
          <dd>
            <Status job={job} />
          </dd>
          <dt>Source</dt>
          <dd class="wrap">{job.inputUrl}</dd>
          <dt>Duration</dt>
          <dd>{formatDuration(job.duration)}</dd>
          <dt>Created</dt>
          <dd>{formatTime(job.createdAt)}</dd>
          <dt>Started</dt>
          <dd>{formatTime(job.startedAt)}</dd>
          <dt>Finished</dt>
          <dd>{formatTime(finishedAt(job))}</dd>
          <dt>Attempts</dt>
          <dd>{job.retryCount + 1}</dd>
        </dl>
        {job.errorMessage ? <Notice kind="error">{job.errorMessage}</Notice> : null}
        {props.link ? (
          <>
            <p>
              <a class="button primary" href={paths.download(job.id)} data-download>
                Download
              </a>
            </p>
            <p class="hint">Signed link (needs no key or session; works until {formatTime(props.link.expiresAt)}):</p>
            <div class="secret">
              <code id="signed-link">{props.link.url}</code>
              <button type="button" data-copy="#signed-link">
                Copy
              </button>
            </div>
          </>
        ) : null}
      </section>
      <PlayerCard job={job} playback={playbackOf(job)} stream={props.stream} />
    </div>
  );
}

export function JobPage(props: { job: Job; link: SignedLink | null; stream: PlaybackLink | null }) {
  return (
    <>
      <JobPanel job={props.job} link={props.link} stream={props.stream} />
      <p>
        <a href={paths.jobs}>← All jobs</a>
      </p>
    </>
  );
}
