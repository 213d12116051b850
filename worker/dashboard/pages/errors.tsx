import { paths } from "../paths";
import { Notice } from "./layout";

export function MessagePage(props: { message: string; requestId?: string }) {
  return (
    <>
      <Notice kind="error">{props.message}</Notice>
      {props.requestId ? (
        <p class="hint">
          Reference: <code>{props.requestId}</code>
        </p>
      ) : null}
      <p>
        <a href={paths.home}>Back to the dashboard</a>
      </p>
    </>
  );
}
