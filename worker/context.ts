import type { PlanId } from "../domain/plans";
import type { ListedJob, PresentedJob } from "./lib/job-columns";
import type { Creator } from "./lib/job-states";
import type { Services } from "./services";

export interface Caller {
  accountId: string;
  /** Null when the dashboard creates the job: a session holds no key. */
  keyId: string | null;
  plan: PlanId;
  webhookUrl: string | null;
}

export interface AppEnv {
  Bindings: Record<string, unknown>;
  Variables: {
    services: Services;
    caller: Caller;
    /** Set on POST /jobs (requireCreator): the caller, or the key its creation statement checks. */
    creator: Creator;
    /** Set on routes where a key is optional (GET /presets). */
    optionalCaller: Caller | null;
    /** Set on the routes about one job of the caller's, read with the key's check (requireCallerWithOwnJob). */
    ownJob: PresentedJob | undefined;
    /** Set on GET /jobs, read with the key's check: the query as parsed, the page's jobs, and the total when the page has any. */
    listed: {
      /** As routes/jobs/schema.ts's listJobsQuery parses it. */
      query: { page: number; limit: number; status?: string; preset?: string };
      jobs: ListedJob[];
      total: number | undefined;
    };
  };
}
