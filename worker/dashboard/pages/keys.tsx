import { KEY_NAME_MAX_LENGTH, type ListedKey } from "../lib/api-keys";
import { paths } from "../paths";
import { formatTime } from "./format";
import { Notice } from "./layout";

/** Only the last four characters are ever shown again (the prefix is not stored: spk_ or sk_). */
const masked = (last4: string) => `…${last4}`;

export function KeysPage(props: { keys: ListedKey[]; csrf: string; errors?: string[]; notice?: string }) {
  return (
    <>
      {props.notice ? <Notice kind="ok">{props.notice}</Notice> : null}
      <section class="card">
        <h2>Create a key</h2>
        {props.errors?.map((e) => (
          <Notice kind="error">{e}</Notice>
        ))}
        <form method="post" action={paths.keys} class="row">
          <input type="hidden" name="_csrf" value={props.csrf} />
          <label>
            Name
            <input name="name" required maxlength={KEY_NAME_MAX_LENGTH} placeholder="e.g. production server" />
          </label>
          <button type="submit" class="primary">
            Create key
          </button>
        </form>
        <p class="hint">
          The full key is shown once, when it is created. Afterwards only its last four characters are.
        </p>
      </section>
      <section class="card">
        <h2>Keys</h2>
        {props.keys.length === 0 ? (
          <p>No keys yet.</p>
        ) : (
          <table id="keys">
            <thead>
              <tr>
                <th>Name</th>
                <th>Key</th>
                <th>Created</th>
                <th>Status</th>
                <th></th>
              </tr>
            </thead>
            <tbody>
              {props.keys.map((k) => (
                <tr data-key-id={k.id}>
                  <td>{k.name ?? <em>unnamed</em>}</td>
                  <td>
                    <code>{masked(k.last4)}</code>
                  </td>
                  <td>{formatTime(k.createdAt)}</td>
                  <td>{k.revokedAt ? `revoked ${formatTime(k.revokedAt)}` : "active"}</td>
                  <td>{k.revokedAt ? null : <a href={paths.revokeKey(k.id)}>Revoke…</a>}</td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </section>
    </>
  );
}

export function KeyCreatedPage(props: { name: string; apiKey: string }) {
  return (
    <section class="card">
      <Notice kind="ok">Key “{props.name}” created.</Notice>
      <p>Copy it now: this is the only time the whole key is shown.</p>
      <div class="secret">
        <code id="new-key">{props.apiKey}</code>
        <button type="button" data-copy="#new-key">
          Copy
        </button>
      </div>
      <p>
        <a href={paths.keys}>Done</a>
      </p>
    </section>
  );
}

export function RevokeKeyPage(props: { target: ListedKey; csrf: string }) {
  return (
    <section class="card">
      <p>
        Revoke the key <strong>{props.target.name ?? "unnamed"}</strong> (<code>{masked(props.target.last4)}</code>)?
        Requests made with it are refused from now on. This cannot be undone.
      </p>
      <form method="post" action={paths.revokeKey(props.target.id)} class="row">
        <input type="hidden" name="_csrf" value={props.csrf} />
        <button type="submit" class="danger">
          Revoke key
        </button>
        <a href={paths.keys}>Cancel</a>
      </form>
    </section>
  );
}
