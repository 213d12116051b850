import { holdsCredentials } from "../../domain/urls";
import { JobFailure } from "../failure";

export function assertAllowedUrl(raw: string): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw JobFailure.sourceRefused("not a valid URL");
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw JobFailure.sourceRefused(`only http and https URLs are fetched (got ${url.protocol})`);
  }
  if (holdsCredentials(url)) throw JobFailure.sourceRefused("credentials in the URL are not accepted");
  return url;
}
