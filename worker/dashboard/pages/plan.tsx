import { PLAN_DISPLAY_NAMES, type PlanId } from "../../../domain/plans";
import type { presentPreset } from "../../../domain/presets/view";
import { UsageMeter, type Usage } from "./overview";

export function PlanPage(props: { plan: PlanId; usage: Usage; presets: ReturnType<typeof presentPreset>[] }) {
  return (
    <>
      <section class="card">
        <h2>{PLAN_DISPLAY_NAMES[props.plan]} plan</h2>
        <p>
          {props.usage.limit} jobs a month. {props.presets.filter((p) => p.available).length} of {props.presets.length}{" "}
          presets are included.
        </p>
      </section>
      <UsageMeter usage={props.usage} />
      <section class="card">
        <h2>Presets</h2>
        <table id="presets">
          <thead>
            <tr>
              <th>Preset</th>
              <th>Category</th>
              <th>Output</th>
              <th>Typical time</th>
              <th>Availability</th>
            </tr>
          </thead>
          <tbody>
            {props.presets.map((p) => (
              <tr class={p.available ? undefined : "locked"} data-preset={p.id}>
                <td>
                  <strong>{p.name}</strong>
                  <br />
                  <code>{p.id}</code>
                </td>
                <td>{p.category}</td>
                <td>
                  {[p.specifications.resolution, p.specifications.videoCodec, p.specifications.audioCodec]
                    .filter(Boolean)
                    .join(" · ")}
                </td>
                <td>{p.estimatedProcessingTime}</td>
                <td>{p.available ? "included" : <span class="upgrade">🔒 {p.upgradeMessage}</span>}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </section>
    </>
  );
}
