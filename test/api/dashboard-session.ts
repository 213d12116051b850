import { randomUUID } from "node:crypto";
import { stack } from "./harness";

export interface Page {
  status: number;
  html: string;
  headers: Headers;
  /** The Location of a redirect, relative to the Worker. */
  location: string | null;
}

/** The `_csrf` value of the first form on the page. */
export function formToken(html: string): string {
  const match = /name="_csrf" value="([^"]+)"/.exec(html);
  if (!match) throw new Error(`no form token on the page:\n${html.slice(0, 500)}`);
  return match[1];
}

/**
 * A client address of its own per session (random, in the IPv6 documentation range), so no
 * test's throttle counters, which outlive a run in the machine's Redis, meet another's. The
 * throttles count an IPv6 address's /64, so the randomness is in the network's half.
 */
const freshAddress = () => `2001:db8:${randomUUID().replace(/-/g, "").slice(0, 8).match(/.{4}/g)!.join(":")}:1::1`;

/**
 * A browser's view of the dashboard without the browser: a cookie jar, same-origin `Origin` on
 * posts (as browsers send), redirects not followed so tests see them.
 */
export class DashboardSession {
  readonly cookies = new Map<string, string>();
  readonly origin = stack.apiUrl;

  constructor(readonly address = freshAddress()) {}

  cookieHeader(): string {
    return [...this.cookies].map(([k, v]) => `${k}=${v}`).join("; ");
  }

  private async send(path: string, init: RequestInit & { headers?: Record<string, string> }): Promise<Page> {
    const res = await fetch(`${this.origin}${path}`, {
      ...init,
      redirect: "manual",
      headers: {
        "CF-Connecting-IP": this.address,
        ...(this.cookies.size ? { Cookie: this.cookieHeader() } : {}),
        ...init.headers,
      },
    });
    for (const line of res.headers.getSetCookie()) {
      const [pair, ...attributes] = line.split(";");
      const [name, value] = [pair.slice(0, pair.indexOf("=")), pair.slice(pair.indexOf("=") + 1)];
      if (attributes.some((a) => /max-age=0/i.test(a.trim())) || value === "") this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
    const location = res.headers.get("location");
    return {
      status: res.status,
      html: await res.text(),
      headers: res.headers,
      location: location?.replace(this.origin, "") ?? null,
    };
  }

  get(path: string, headers: Record<string, string> = {}) {
    return this.send(path, { method: "GET", headers });
  }

  /** A form post; `_csrf` is whatever the caller puts in `fields`. */
  post(path: string, fields: Record<string, string>, headers: Record<string, string> = { Origin: stack.apiUrl }) {
    return this.send(path, {
      method: "POST",
      body: new URLSearchParams(fields).toString(),
      headers: { "Content-Type": "application/x-www-form-urlencoded", ...headers },
    });
  }

  /** A PUT of bytes, as the upload page's script sends a part: the token goes in a header, set by the caller. */
  put(path: string, body: Uint8Array<ArrayBuffer> | string, headers: Record<string, string> = {}) {
    return this.send(path, { method: "PUT", body, headers: { Origin: stack.apiUrl, ...headers } });
  }

  /** Fetches `formPage`, then posts `fields` to `action` with that page's form token. */
  async submit(formPage: string, action: string, fields: Record<string, string> = {}) {
    const page = await this.get(formPage);
    return this.post(action, { _csrf: formToken(page.html), ...fields });
  }

  /** Signs up, then signs in: sign-up answers the same whether the email is new (routes/auth.tsx), so it signs no one in. */
  async signUp(email = `user-${randomUUID()}@example.com`, password = "correct horse battery") {
    const res = await this.submit("/dashboard/signup", "/dashboard/signup", { email, password });
    if (res.status !== 303) throw new Error(`sign-up failed: ${res.status}\n${res.html.slice(0, 800)}`);
    const signedIn = await this.signIn(email, password);
    if (signedIn.status !== 303) throw new Error(`sign-in after sign-up failed: ${signedIn.status}`);
    return { email, password };
  }

  signIn(email: string, password: string) {
    return this.submit("/dashboard/signin", "/dashboard/signin", { email, password });
  }

  /** Creates a key on the keys page; returns the full key shown once. */
  async createKey(name = "test key") {
    const res = await this.submit("/dashboard/keys", "/dashboard/keys", { name });
    const key = /<code id="new-key">([^<]+)<\/code>/.exec(res.html)?.[1];
    if (res.status !== 201 || !key) throw new Error(`key creation failed: ${res.status}`);
    return key;
  }

  sessionToken(): string {
    const token = this.cookies.get("vep_session");
    if (!token) throw new Error("not signed in");
    return token;
  }
}

/** A signed-up session. */
export async function signedUp() {
  const session = new DashboardSession();
  const user = await session.signUp();
  return { session, ...user };
}
