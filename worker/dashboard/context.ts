import type { Context } from "hono";
import type { AppEnv } from "../context";
import type { SignedIn } from "./auth/session";

export interface DashboardEnv {
  Bindings: AppEnv["Bindings"];
  Variables: AppEnv["Variables"] & {
    /** Set on every dashboard request: who is signed in, if anyone. */
    signedIn: SignedIn | null;
  };
}

/** The signed-in user on a route behind requireSignIn. */
export function me(c: Context<DashboardEnv>): SignedIn {
  const signedIn = c.get("signedIn");
  if (!signedIn) throw new Error("a signed-in route ran without a session");
  return signedIn;
}
