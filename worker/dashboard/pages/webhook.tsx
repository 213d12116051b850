import { WEBHOOK_URL_MAX_LENGTH } from "../lib/webhook";
import { paths } from "../paths";
import { ActionForm, Notice } from "./layout";

type TestResult = { delivered: true } | { delivered: false; reason: string };

export interface WebhookPageProps {
  csrf: string;
  url: string | null;
  /** The secret in clear, only on the response to Reveal or Rotate. */
  secret?: string;
  hasSecret: boolean;
  notice?: string;
  errors?: string[];
  test?: TestResult;
  /** What the URL field shows after a refused save. */
  draftUrl?: string;
}

export function WebhookPage(props: WebhookPageProps) {
  return (
    <>
      {props.notice ? <Notice kind="ok">{props.notice}</Notice> : null}
      <section class="card">
        <h2>Endpoint</h2>
        <p class="hint">
          When a job completes or fails, a <code>job.completed</code> or <code>job.failed</code> event is POSTed here,
          signed per Standard Webhooks (<code>webhook-id</code>, <code>webhook-timestamp</code>,{" "}
          <code>webhook-signature</code>) with the secret below. Leave the field empty and save to remove the webhook.
        </p>
        {props.errors?.map((e) => (
          <Notice kind="error">{e}</Notice>
        ))}
        <form method="post" action={paths.webhook} class="row">
          <input type="hidden" name="_csrf" value={props.csrf} />
          <label class="grow">
            URL
            <input
              name="url"
              type="url"
              maxlength={WEBHOOK_URL_MAX_LENGTH}
              value={props.draftUrl ?? props.url ?? ""}
              placeholder="https://example.com/hooks/video"
            />
          </label>
          <button type="submit" class="primary">
            Save
          </button>
        </form>
      </section>
      {props.url && props.hasSecret ? (
        <section class="card">
          <h2>Signing secret</h2>
          <div class="secret">
            <code id="webhook-secret">{props.secret ?? "whsec_••••••••••••••••"}</code>
            {props.secret ? (
              <button type="button" data-copy="#webhook-secret">
                Copy
              </button>
            ) : (
              <ActionForm action={`${paths.webhook}/reveal`} csrf={props.csrf} label="Reveal" />
            )}
          </div>
          <p class="hint">Rotating makes a new secret at once: deliveries are signed with it from then on.</p>
          <div class="row">
            <ActionForm action={`${paths.webhook}/rotate`} csrf={props.csrf} label="Rotate secret" danger />
            <ActionForm action={`${paths.webhook}/test`} csrf={props.csrf} label="Send test event" />
          </div>
          {props.test ? (
            <Notice kind={props.test.delivered ? "ok" : "error"}>
              <span id="test-result">
                {props.test.delivered
                  ? "Test event delivered: the endpoint answered with a 2xx."
                  : `Test event not delivered: ${props.test.reason}.`}
              </span>
            </Notice>
          ) : null}
        </section>
      ) : null}
    </>
  );
}
