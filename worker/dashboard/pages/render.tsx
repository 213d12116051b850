import type { Context } from "hono";
import { html } from "hono/html";
import type { Child } from "hono/jsx";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import type { DashboardEnv } from "../context";
import { MessagePage } from "./errors";
import { Layout } from "./layout";

/** A whole dashboard page in the layout, for whoever is signed in on this request. */
export function renderPage(
  c: Context<DashboardEnv>,
  page: { title: string; hls?: boolean; dash?: boolean; body: Child },
  status: ContentfulStatusCode = 200,
) {
  return c.html(
    html`<!doctype html>${(
      <Layout title={page.title} signedIn={c.get("signedIn") ?? null} hls={page.hls} dash={page.dash}>
        {page.body}
      </Layout>
    )}`,
    status,
  );
}

/** What an unknown id, a malformed one and another account's all get alike. */
export function notFoundPage(c: Context<DashboardEnv>, what: string) {
  return renderPage(c, { title: "Not found", body: <MessagePage message={`${what} not found.`} /> }, 404);
}
