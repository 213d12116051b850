import type { CreateEdlRequest } from "../client";

type JobMetadata = CreateEdlRequest["metadata"];

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/**
 * A timeline file as the API's request. It holds either the EDL document alone or a whole request
 * body `{edl, metadata?}`, such as the sample `npm run dev` writes for curl's `-d @file`. An EDL
 * document always has `timeline` and never `edl`, so the two cannot be mistaken; anything else is
 * sent as the document, for the API to judge.
 */
export function timelineRequest(content: unknown): { edl: CreateEdlRequest["edl"]; metadata?: JobMetadata } {
  if (isObject(content) && "edl" in content && !("timeline" in content))
    return content as { edl: CreateEdlRequest["edl"]; metadata?: JobMetadata };
  return { edl: content as CreateEdlRequest["edl"] };
}

/** The job's metadata: the file's, with `--name` and `--description` replacing its fields of those names. */
export function renderMetadata(fromFile: JobMetadata, flags: { name?: string; description?: string }): JobMetadata {
  const given = Object.fromEntries(Object.entries(flags).filter(([, value]) => value !== undefined));
  if (Object.keys(given).length === 0) return fromFile;
  return { ...(isObject(fromFile) ? fromFile : {}), ...given };
}
