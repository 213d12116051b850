import type { presentPreset } from "../../../domain/presets/view";
import type { UploadHoldings } from "../../lib/uploads";
import { paths } from "../paths";
import { formatBytes, formatTime } from "./format";

/** The plan's limits on uploads (docs/uploads.md). */
interface UploadLimits {
  /** The largest upload, in bytes. */
  maxBytes: number;
  /** What the account's uploads may hold at once, in bytes. */
  storageBytes: number;
  /** Uploads open (pending) at once. */
  maxPending: number;
  /** Days an upload's file is kept from its creation. */
  retentionDays: number;
}

export interface UploadPageProps {
  csrf: string;
  /** The presets the account's plan includes. */
  presets: ReturnType<typeof presentPreset>[];
  limits: UploadLimits;
  /** What the account's uploads hold now. */
  held: UploadHoldings;
}

/** The account's uploads against the plan's storage and its cap on open uploads. */
function UploadStorage({ limits, held }: Pick<UploadPageProps, "limits" | "held">) {
  const full = held.bytes >= limits.storageBytes || held.open >= limits.maxPending;
  return (
    <section class="card" id="upload-storage">
      <h2>Storage for uploads</h2>
      <meter
        id="upload-storage-meter"
        min={0}
        max={limits.storageBytes}
        value={Math.min(held.bytes, limits.storageBytes)}
        high={limits.storageBytes * 0.8}
        optimum={0}
      >
        {formatBytes(held.bytes)} of {formatBytes(limits.storageBytes)}
      </meter>
      <p>
        <strong data-testid="upload-storage-text">
          {formatBytes(held.bytes)} of {formatBytes(limits.storageBytes)} used
        </strong>{" "}
        ·{" "}
        <span data-testid="upload-open-text">
          {held.open} of {limits.maxPending} uploads open
        </span>
      </p>
      <p class="hint">
        An upload counts while it is open (until it expires, a day after it was begun) and once completed, until its
        file is deleted, {limits.retentionDays} days after it was begun.
        {held.nextRelease ? ` The next one stops counting ${formatTime(held.nextRelease)}.` : ""}
      </p>
      {full ? (
        <p class="notice error">
          New uploads are refused until one of these expires or is deleted, or the plan changes.
        </p>
      ) : null}
    </section>
  );
}

/**
 * A file dropped or picked is uploaded at once by the page's script (assets/dashboard.js), which
 * then points the encode form at the upload and enables it. Without the script there is nothing
 * to upload with: the API and `vep upload` do it instead.
 */
export function UploadPage(props: UploadPageProps) {
  return (
    <>
      <section class="card" id="upload" data-uploads={paths.uploads}>
        <h2>1. Upload</h2>
        <div class="drop-zone" id="drop-zone">
          <p>Drop a video or audio file here, or</p>
          <label class="button">
            Choose a file…
            <input type="file" id="file-input" class="visually-hidden" accept="video/*,audio/*" />
          </label>
        </div>
        <p class="hint">
          At most {formatBytes(props.limits.maxBytes)} on your plan: a video or audio file. The file is checked when the
          job runs.
        </p>
        <div class="upload-progress" hidden>
          <progress id="upload-progress" max="100" value="0"></progress>
          <span id="upload-percent">0%</span>
        </div>
        <p id="upload-status" role="status"></p>
        <noscript>
          <p class="notice error">Uploading from this page needs JavaScript. The API and the CLI upload without it.</p>
        </noscript>
      </section>
      <section class="card">
        <h2>2. Encode</h2>
        <form method="post" id="encode-form" data-action={paths.encodeUpload(":id")} class="row">
          <input type="hidden" name="_csrf" value={props.csrf} />
          <label class="grow">
            Preset
            <select name="preset" id="preset">
              {props.presets.map((p) => (
                <option value={p.id}>
                  {p.name} ({p.id})
                </option>
              ))}
            </select>
          </label>
          <button type="submit" class="primary" id="encode" disabled>
            Encode
          </button>
        </form>
        <p class="hint">
          Encoding takes one job of your monthly quota. The job's page follows it; see{" "}
          <a href={paths.plan}>your plan</a> for the presets it includes.
        </p>
      </section>
      <UploadStorage limits={props.limits} held={props.held} />
    </>
  );
}
