import { PLAN_DISPLAY_NAMES, type PlanId } from "../../../domain/plans";
import { paths } from "../paths";

export interface Usage {
  used: number;
  limit: number;
  /** First moment of the next quota period. */
  resetsAt: Date;
}

export function UsageMeter(props: { usage: Usage }) {
  const { used, limit, resetsAt } = props.usage;
  return (
    <section class="card">
      <h2>Usage this month</h2>
      <meter id="usage" min={0} max={Math.max(limit, 1)} value={Math.min(used, limit)} high={limit * 0.8} optimum={0}>
        {used} of {limit}
      </meter>
      <p>
        <strong data-testid="usage-text">
          {used} of {limit} jobs used
        </strong>{" "}
        · resets {resetsAt.toISOString().slice(0, 10)} (UTC)
      </p>
      {used >= limit ? (
        <p class="notice error">
          The monthly quota is spent: new jobs are refused until it resets or the plan changes.
        </p>
      ) : null}
    </section>
  );
}

export function OverviewPage(props: {
  plan: PlanId;
  usage: Usage;
  activeKeys: number;
  webhookUrl: string | null;
  apiBase: string;
}) {
  return (
    <>
      <UsageMeter usage={props.usage} />
      <section class="card">
        <h2>Account</h2>
        <dl>
          <dt>Plan</dt>
          <dd>
            {PLAN_DISPLAY_NAMES[props.plan]} (<a href={paths.plan}>presets</a>)
          </dd>
          <dt>Active API keys</dt>
          <dd>
            {props.activeKeys} (<a href={paths.keys}>manage</a>)
          </dd>
          <dt>Webhook</dt>
          <dd>
            {props.webhookUrl ?? "none"} (<a href={paths.webhook}>settings</a>)
          </dd>
        </dl>
      </section>
      <section class="card">
        <h2>Start</h2>
        <p>
          Create an <a href={paths.keys}>API key</a>, then send a job:
        </p>
        <pre>
          {`curl -X POST ${props.apiBase}/jobs \\
  -H 'Authorization: Bearer spk_…' -H 'Content-Type: application/json' \\
  -d '{"inputUrl":"https://…/video.mp4","preset":"mp4_264_720p"}'`}
        </pre>
        <p>
          Its progress and output appear under <a href={paths.jobs}>Jobs</a>.
        </p>
      </section>
    </>
  );
}
