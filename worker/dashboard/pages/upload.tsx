import type { presentPreset } from "../../../domain/presets/view";
import { paths } from "../paths";
import { formatBytes } from "./format";

export interface UploadPageProps {
  csrf: string;
  /** The presets the account's plan includes. */
  presets: ReturnType<typeof presentPreset>[];
  /** The plan's largest upload, in bytes. */
  maxBytes: number;
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
        <p class="hint">At most {formatBytes(props.maxBytes)} on your plan. The file is checked when the job runs.</p>
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
    </>
  );
}
