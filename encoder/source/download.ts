import { lookup as dnsLookup, type LookupAddress } from "node:dns";
import { open, rm } from "node:fs/promises";
import type { LookupFunction } from "node:net";
import { Transform } from "node:stream";
import { pipeline } from "node:stream/promises";
import ipaddr from "ipaddr.js";
import { JobFailure } from "../failure";
import { httpRequest, type HttpResponse } from "../http/client";
import { isAllowedAddress } from "../../domain/addresses";
import { assertAllowedUrl } from "./address-policy";

export interface DownloadPolicy {
  allowLoopback: boolean;
  maxBytes: number;
  timeoutMs: number;
  maxRedirects?: number;
  /**
   * The slowest download kept going: one that receives fewer than `bytesPerSecond` over a
   * window of `windowMs` (headers included, from the first request on) is given up.
   */
  minRate?: { bytesPerSecond: number; windowMs: number };
  /** The budget this download shares with the job's other downloads, if it has any. */
  together?: ByteBudget;
  /**
   * What `maxBytes` is the limit on, when it is narrower than a source's ("caption files"): the
   * refusal then names the file and the limit in MiB.
   */
  capOn?: string;
}

/**
 * What a job's downloads may write together. A timeline's assets draw on one, so that many
 * assets, each under the size cap, cannot fill the encoder's disk under the other job's encode.
 */
export class ByteBudget {
  private spent = 0;
  /** `of` says whose bytes they are, for the refusal: "a timeline's assets together". */
  constructor(
    readonly limit: number,
    readonly of: string,
  ) {}

  get left(): number {
    return Math.max(0, this.limit - this.spent);
  }

  /** Counts bytes written; false once the total is over the limit. */
  spend(bytes: number): boolean {
    this.spent += bytes;
    return this.spent <= this.limit;
  }
}

/**
 * How much the file takes in before it holds the download back. The socket hands over 64 KiB at
 * a time; with the default 16 KiB, each piece would be a write of its own, and on a fast link the
 * writes, not the network, would set the pace. As much as the uploads read at once (upload/s3.ts).
 */
const WRITE_BUFFER_BYTES = 1024 * 1024;

export interface Downloaded {
  bytes: number;
  finalUrl: string;
  seconds: number;
}

/**
 * The resolver every connection goes through: each address DNS returns is checked before the
 * socket opens, so neither a hostname pointing inside nor a rebinding answer gets through.
 */
function guardedLookup(allowLoopback: boolean): LookupFunction {
  return (hostname, options, callback) => {
    dnsLookup(hostname, { ...options, all: true }, (err, addresses) => {
      if (err) return callback(err, []);
      const refused = addresses.find((a) => !isAllowedAddress(a.address, { allowLoopback }));
      if (refused || addresses.length === 0) {
        return callback(JobFailure.sourceRefused(`${hostname} resolves to a non-public address`), []);
      }
      if (options.all) return (callback as (e: null, all: LookupAddress[]) => void)(null, addresses);
      callback(null, addresses[0].address, addresses[0].family);
    });
  };
}

function checkLiteralHost(url: URL, allowLoopback: boolean) {
  const host = url.hostname.replace(/^\[|\]$/g, "");
  if (ipaddr.isValid(host) && !isAllowedAddress(host, { allowLoopback })) {
    throw JobFailure.sourceRefused(`${host} is not a public address`);
  }
}

/**
 * Aborts `stalled` when a window of `windowMs` passes with fewer than `bytesPerSecond` on
 * average, as curl's --speed-limit/--speed-time do. A source that trickles a byte every few
 * seconds never trips the connection's idle timeout, and would otherwise hold its job (and an
 * encode slot) until the whole-download timeout, 30 minutes by default.
 */
function watchRate(minRate: DownloadPolicy["minRate"], stalled: AbortController) {
  let received = 0;
  const timer = minRate
    ? setInterval(() => {
        if (received < (minRate.bytesPerSecond * minRate.windowMs) / 1000) stalled.abort();
        received = 0;
      }, minRate.windowMs)
    : undefined;
  return {
    count: (bytes: number) => (received += bytes),
    stop: () => clearInterval(timer),
  };
}

export function describeStall({ bytesPerSecond, windowMs }: NonNullable<DownloadPolicy["minRate"]>): string {
  const rate = bytesPerSecond >= 1024 ? `${+(bytesPerSecond / 1024).toFixed(1)} KiB/s` : `${bytesPerSecond} bytes/s`;
  return `the source sent less than ${rate} for ${+(windowMs / 1000).toFixed(1)} s`;
}

/**
 * One GET of a source through the guard: every connection's addresses checked as it is made,
 * every redirect hop checked like the first URL. Answers the final response (any status but a
 * redirect) and the URL it came from; a network failure or a refusal is thrown as the
 * JobFailure it is.
 */
export async function guardedGet(
  source: string,
  policy: Pick<DownloadPolicy, "allowLoopback" | "maxRedirects">,
  options: { headers?: Record<string, string>; signal?: AbortSignal; idleTimeoutMs?: number } = {},
): Promise<{ res: HttpResponse; url: URL }> {
  const lookup = guardedLookup(policy.allowLoopback);
  let url = assertAllowedUrl(source);
  for (let hop = 0; hop <= (policy.maxRedirects ?? 5); hop++) {
    checkLiteralHost(url, policy.allowLoopback);
    const res = await httpRequest(url, {
      signal: options.signal,
      lookup,
      idleTimeoutMs: options.idleTimeoutMs,
      headers: { "user-agent": USER_AGENT, ...options.headers },
    });
    if (res.status >= 300 && res.status < 400 && res.headers.location) {
      res.body.destroy();
      url = assertAllowedUrl(new URL(res.headers.location, url).toString());
      continue;
    }
    return { res, url };
  }
  throw JobFailure.download("too many redirects");
}

const USER_AGENT = "video-encoder/1";

/**
 * Streams a public http(s) source to `dest`, never holding it in memory. Every redirect hop is
 * checked like the first URL; the size cap holds whether or not the server sends a length.
 */
export async function downloadSource(
  source: string,
  dest: string,
  policy: DownloadPolicy,
  signal?: AbortSignal,
): Promise<Downloaded> {
  const downloaded = await fetchSource(source, dest, policy, signal);
  // Null only for a rangedFrom, which this call gives none.
  if (!downloaded) throw new Error("fetchSource left a source to ranges unasked");
  return downloaded;
}

/**
 * As downloadSource, but a source of `rangedFrom` bytes or more whose origin says it serves byte
 * ranges (`Accept-Ranges: bytes`) is left where it is: null, its body not read, for the caller
 * to read by ranges. A smaller one costs no request more than its download.
 */
export function downloadUnlessRanged(
  source: string,
  dest: string,
  policy: DownloadPolicy,
  rangedFrom: number,
  signal?: AbortSignal,
): Promise<Downloaded | null> {
  return fetchSource(source, dest, policy, signal, rangedFrom);
}

async function fetchSource(
  source: string,
  dest: string,
  policy: DownloadPolicy,
  signal?: AbortSignal,
  rangedFrom?: number,
): Promise<Downloaded | null> {
  const started = performance.now();
  const timeout = AbortSignal.timeout(policy.timeoutMs);
  const stalled = new AbortController();
  const combined = AbortSignal.any([timeout, stalled.signal, ...(signal ? [signal] : [])]);
  /** A cancelled job ends with its own reason; anything else is a refusal or a retryable failure. */
  const failure = (err: unknown) => {
    if (signal?.aborted) return signal.reason;
    if (err instanceof JobFailure) return err;
    if (stalled.signal.aborted && policy.minRate) return JobFailure.download(describeStall(policy.minRate), err);
    return JobFailure.download(describeNetworkError(err, timeout), err);
  };
  const rate = watchRate(policy.minRate, stalled);
  try {
    let res: HttpResponse;
    let url: URL;
    try {
      ({ res, url } = await guardedGet(source, policy, { signal: combined }));
    } catch (err) {
      throw failure(err);
    }
    if (res.status !== 200) {
      res.body.destroy();
      throw JobFailure.download(`the source answered HTTP ${res.status}`);
    }
    const length = Number(res.headers["content-length"] ?? NaN);
    const refusal = capRefusals(url, policy);
    if (length > policy.maxBytes) {
      res.body.destroy();
      throw JobFailure.sourceRefused(refusal.own(length));
    }
    if (rangedFrom !== undefined && length >= rangedFrom && res.headers["accept-ranges"] === "bytes") {
      res.body.destroy();
      return null;
    }
    const together = policy.together;
    if (together && length > together.left) {
      res.body.destroy();
      throw JobFailure.sourceRefused(refusal.together(together, length));
    }
    let seen = 0;
    const cap = new Transform({
      transform(chunk: Buffer, _enc, done) {
        seen += chunk.length;
        rate.count(chunk.length);
        if (seen > policy.maxBytes) done(JobFailure.sourceRefused(refusal.own()));
        else if (together && !together.spend(chunk.length)) done(JobFailure.sourceRefused(refusal.together(together)));
        else done(null, chunk);
      },
    });
    // Opened before the first byte: a stream that opens its file itself can create it after a
    // refusal's removal, when the refusal comes with the first chunk, and leave it behind.
    const file = await open(dest, "w").catch((err) => {
      res.body.destroy();
      throw failure(err);
    });
    const out = file.createWriteStream({ highWaterMark: WRITE_BUFFER_BYTES });
    try {
      await pipeline(res.body, cap, out, { signal: combined });
    } catch (err) {
      await rm(dest, { force: true });
      throw failure(err);
    }
    return { bytes: seen, finalUrl: url.toString(), seconds: (performance.now() - started) / 1000 };
  } finally {
    rate.stop();
  }
}

/** A URL as a refusal names it: without its query, which may hold the customer's own credentials. */
const fileOf = (url: URL) => `${url.origin}${url.pathname}`;

/**
 * The refusals of a file over a cap, of `length` bytes when the server said so. With `capOn`
 * (a timeline's assets) they name the file and give the caps in MiB; a job's one source is
 * named by the job already.
 */
function capRefusals(url: URL, { maxBytes, capOn }: DownloadPolicy) {
  if (capOn === undefined)
    return {
      own: (length?: number) =>
        length === undefined
          ? `larger than the ${maxBytes}-byte limit`
          : `${length} bytes is over the ${maxBytes}-byte limit`,
      together: ({ left, limit, of }: ByteBudget, length?: number) =>
        length === undefined
          ? `over the ${limit}-byte limit on ${of}`
          : `${length} bytes is over the ${left} bytes left of the ${limit}-byte limit on ${of}`,
    };
  const file = fileOf(url);
  const mib = (bytes: number) => `${+(bytes / 1024 ** 2).toFixed(2)} MiB`;
  return {
    own: (length?: number) =>
      length === undefined
        ? `${file} is larger than the ${mib(maxBytes)} limit on ${capOn}`
        : `${file} is ${length} bytes, over the ${mib(maxBytes)} limit on ${capOn}`,
    together: ({ left, limit, of }: ByteBudget, length?: number) =>
      length === undefined
        ? `${file} is over what is left of the ${mib(limit)} limit on ${of}`
        : `${file} is ${length} bytes, over the ${left} bytes left of the ${mib(limit)} limit on ${of}`,
  };
}

export function describeNetworkError(err: unknown, timeout?: AbortSignal): string {
  if (timeout?.aborted) return "timed out";
  const code = (err as { code?: unknown })?.code;
  if (code === "ECONNREFUSED") return "connection refused";
  if (code === "ENOTFOUND" || code === "EAI_AGAIN") return "host not found";
  // The connection closed before the body was complete: Node says ECONNRESET ("aborted").
  if (code === "ECONNRESET" || code === "ERR_STREAM_PREMATURE_CLOSE") return "connection reset";
  if (code === "ECONNECTTIMEOUT") return "connection timed out";
  if (code === "EIDLETIMEOUT") return "the source stopped sending";
  return typeof code === "string" ? `network error (${code})` : "network error";
}
