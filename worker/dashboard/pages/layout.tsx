import type { Child } from "hono/jsx";
import type { SignedIn } from "../auth/session";
import { paths } from "../paths";

export interface LayoutProps {
  title: string;
  signedIn: SignedIn | null;
  /** Pages with a player load hls.js before the dashboard script; dash.js, a module the script imports, is fetched ahead. */
  hls?: boolean;
  dash?: boolean;
  children: Child;
}

const NAV: [string, string][] = [
  [paths.home, "Overview"],
  [paths.keys, "API keys"],
  [paths.webhook, "Webhook"],
  [paths.jobs, "Jobs"],
  [paths.upload, "Upload"],
  [paths.plan, "Plan & presets"],
  [paths.reference, "API reference"],
];

/** A form that posts with the session's CSRF token, for one-button actions. */
export function ActionForm(props: { action: string; csrf: string; label: string; danger?: boolean; name?: string }) {
  return (
    <form method="post" action={props.action} class="inline">
      <input type="hidden" name="_csrf" value={props.csrf} />
      <button type="submit" name={props.name} class={props.danger ? "danger" : undefined}>
        {props.label}
      </button>
    </form>
  );
}

export function Layout(props: LayoutProps) {
  return (
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <title>{`${props.title} · Video encoding dashboard`}</title>
        {/* No favicon request: the Worker has none to serve. */}
        <link rel="icon" href="data:," />
        <link rel="stylesheet" href={paths.asset("dashboard.css")} />
        {props.hls ? <script src={paths.asset("hls.light.min.js")} defer></script> : null}
        {props.dash ? <link rel="modulepreload" href={paths.asset("dash.all.min.js")} /> : null}
        <script src={paths.asset("dashboard.js")} defer></script>
      </head>
      <body>
        <header>
          <a class="brand" href={paths.home}>
            Video encoding
          </a>
          {props.signedIn ? (
            <nav>
              {NAV.map(([href, label]) => (
                <a href={href}>{label}</a>
              ))}
            </nav>
          ) : null}
          {props.signedIn ? (
            <div class="who">
              <span>{props.signedIn.email}</span>
              <ActionForm action={paths.signOut} csrf={props.signedIn.csrfToken} label="Sign out" />
            </div>
          ) : null}
        </header>
        <main>
          <h1>{props.title}</h1>
          {props.children}
        </main>
      </body>
    </html>
  );
}

export function Notice(props: { kind: "error" | "ok" | "info"; children: Child }) {
  return (
    <p class={`notice ${props.kind}`} role={props.kind === "error" ? "alert" : "status"}>
      {props.children}
    </p>
  );
}
