/**
 * The single entry point: a JSON value and a plan in, the PUT /edl verdict out. Pure, and it
 * never throws: every shape of input becomes errors in the result.
 */
import type { PlanId } from "../plans";
import { UNSTORABLE_TEXT_MESSAGE, unstorableTextPaths } from "../storable-text";
import { estimate, type EdlEstimate } from "./estimate";
import { type Issues, isObject, type JsonObject, own } from "./fields";
import { fieldsOf, oneOf, record } from "./kinds";
import { limitErrors, sizeErrors } from "./limits";
import { readOutput } from "./output";
import { EDL_VERSIONS, type EdlVersion, type OutputSettings, type ValidatedEdl } from "./validated-edl";
import { computeStats, type EdlStats } from "./stats";
import { readTimeline, type TimelineReading } from "./timeline";

export interface EdlValidation {
  /** True exactly when `errors` is empty; plan limits are part of validity. */
  valid: boolean;
  errors: string[];
  warnings: string[];
  stats: EdlStats;
  estimate: EdlEstimate;
  /** The timeline with defaults applied; present exactly when `valid`. */
  edl?: ValidatedEdl;
}

export const EXPERIMENTAL_FEATURES_WARNING = "Experimental features are accepted but not applied";

interface Reading {
  version: EdlVersion;
  output: OutputSettings;
  timeline: TimelineReading;
}

function readDocument(document: JsonObject, issues: Issues): Reading {
  const f = fieldsOf(document, "", issues);
  // Without a version it knows, the rest is read by 1.0's rules: the version the contract shows (§3.10).
  const version = f.readAs("version", oneOf(EDL_VERSIONS, true), true) ?? "1.0";
  const output = readOutput(own(document, "output"), issues.errors);
  const timeline = readTimeline(own(document, "timeline"), issues, version, output.fps);
  // Only its type is checked: the service stores metadata and nothing reads it.
  f.readAs("metadata", record());
  return { version, output, timeline };
}

/** One error says it all; the defaults still give the estimate something to work on. */
function notADocument(issues: Issues): Reading {
  issues.errors.push("EDL document must be a JSON object");
  return { version: "1.0", output: readOutput(undefined, []), timeline: { tracks: [], features: [] } };
}

export function validateEdl(input: unknown, plan: PlanId): EdlValidation {
  const issues: Issues = { errors: [], warnings: [] };
  const { version, output, timeline } = isObject(input) ? readDocument(input, issues) : notADocument(issues);
  // The document is stored as sent, unknown fields included.
  issues.errors.push(...unstorableTextPaths(input).map((path) => `${path || "edl"}: ${UNSTORABLE_TEXT_MESSAGE}`));

  const stats = computeStats(timeline);
  issues.errors.push(...limitErrors(stats, plan));
  // Only a timeline right in every other way: its length means nothing beside a missing video track.
  if (timeline.validTracks && issues.errors.length === 0)
    issues.errors.push(...sizeErrors(timeline.validTracks, stats.duration, output.fps));
  // In 1.1 the features are applied: `stats.features` lists them, and no warning is due.
  if (version === "1.0" && stats.features.length > 0) {
    issues.warnings.push(`${EXPERIMENTAL_FEATURES_WARNING}: ${stats.features.join(", ")}`);
  }

  const valid = issues.errors.length === 0;
  return {
    valid,
    errors: issues.errors,
    warnings: issues.warnings,
    stats,
    estimate: estimate({
      output,
      duration: stats.duration,
      overlap: timeline.transitions?.overlap ?? 0,
      assets: stats.assets,
      complexity: stats.complexity,
    }),
    ...(valid && timeline.validTracks && { edl: { version, output, timeline: { tracks: timeline.validTracks } } }),
  };
}

/**
 * PUT /edl's `plan.canProcess`. Limits are checked inside validation, so a timeline the plan
 * can process is exactly a valid one; this names that for the route.
 */
export function canProcess(validation: EdlValidation): boolean {
  return validation.valid;
}

export { postStats } from "./stats";
