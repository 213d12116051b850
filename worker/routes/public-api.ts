import { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../context";
import { registerCreateEdl } from "./edl/create";
import { registerValidateEdl } from "./edl/validate";
import { registerCancelJob } from "./jobs/cancel";
import { registerCreateJob } from "./jobs/create";
import { registerDownloadUrl } from "./jobs/download-url";
import { registerGetJob } from "./jobs/get";
import { registerListJobs } from "./jobs/list";
import { registerListPresets } from "./presets/list";
import { registerCompleteUpload } from "./uploads/complete";
import { registerCreateUpload } from "./uploads/create";
import { registerGetUpload } from "./uploads/get";

/** The eleven operations of /api/v1, each registered with its OpenAPI description. */
export function publicApi() {
  const api = new OpenAPIHono<AppEnv>();
  registerCreateJob(api);
  registerListJobs(api);
  registerGetJob(api);
  registerCancelJob(api);
  registerDownloadUrl(api);
  registerListPresets(api);
  registerCreateEdl(api);
  registerValidateEdl(api);
  registerCreateUpload(api);
  registerGetUpload(api);
  registerCompleteUpload(api);
  return api;
}
