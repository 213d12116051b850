import { WEBHOOK_URL_MAX_LENGTH } from "../../../domain/urls";
import type { TestOutcome } from "../lib/webhook";
import { paths } from "../paths";
import { ActionForm, Notice } from "./layout";

/** What the page says of a test event: sent and answered, refused before sending, or throttled. */
function testNotice(props: WebhookPageProps) {
  if (props.testThrottledFor !== undefined) {
    const minutes = Math.ceil(props.testThrottledFor / 60);
    return {
      ok: false,
      text: `Too many test events. Please wait and try again in ${minutes} minute${minutes === 1 ? "" : "s"}.`,
    };
  }
  const test = props.test;
  if (!test) return null;
  if ("refused" in test) return { ok: false, text: `Test event not sent: ${test.refused}` };
  return test.delivered
    ? { ok: true, text: "Test event delivered: the endpoint answered with a 2xx." }
    : { ok: false, text: `Test event not delivered: ${test.reason}.` };
}

export interface WebhookPageProps {
  csrf: string;
  url: string | null;
  /** The secret in clear, only on the response to Reveal or Rotate. */
  secret?: string;
  hasSecret: boolean;
  notice?: string;
  errors?: string[];
  test?: TestOutcome;
  /** The test-event throttle's wait, in seconds, when it refused this one. */
  testThrottledFor?: number;
  /** What the URL field shows after a refused save. */
  draftUrl?: string;
}

export function WebhookPage(props: WebhookPageProps) {
  const test = testNotice(props);
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
          {test ? (
            <Notice kind={test.ok ? "ok" : "error"}>
              <span id="test-result">{test.text}</span>
            </Notice>
          ) : null}
        </section>
      ) : null}
    </>
  );
}
