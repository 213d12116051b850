import { lookup as dnsLookup, type LookupAddress } from "node:dns";
import { createWriteStream } from "node:fs";
import { rm } from "node:fs/promises";
import { Transform } from "node:stream";
import { pipeline } from "node:stream/promises";
import ipaddr from "ipaddr.js";
import { Agent, request } from "undici";
import { SourceRefusedError, assertAllowedUrl, isAllowedAddress } from "./address-policy";

export interface DownloadPolicy {
  allowLoopback: boolean;
  maxBytes: number;
  timeoutMs: number;
  maxRedirects?: number;
}

/** A download that failed for a reason worth retrying (network, server error, timeout). */
export class DownloadError extends Error {
  readonly retryable = true;
}

/**
 * The resolver every connection goes through: each address DNS returns is checked before the
 * socket opens, so neither a hostname pointing inside nor a rebinding answer gets through.
 */
function guardedLookup(allowLoopback: boolean) {
  return (
    hostname: string,
    options: object,
    callback: (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void,
  ) => {
    dnsLookup(hostname, { ...options, all: true }, (err, addresses) => {
      if (err) return callback(err, []);
      const list = addresses as LookupAddress[];
      const refused = list.find((a) => !isAllowedAddress(a.address, { allowLoopback }));
      if (refused || list.length === 0) {
        const e = new SourceRefusedError(`Source refused: ${hostname} resolves to a non-public address`) as Error & { code?: string };
        e.code = "ESOURCEREFUSED";
        return callback(e, []);
      }
      if ((options as { all?: boolean }).all) return callback(null, list);
      callback(null, list[0].address, list[0].family);
    });
  };
}

function checkLiteralHost(url: URL, allowLoopback: boolean) {
  const host = url.hostname.replace(/^\[|\]$/g, "");
  if (ipaddr.isValid(host) && !isAllowedAddress(host, { allowLoopback })) {
    throw new SourceRefusedError(`Source refused: ${host} is not a public address`);
  }
}

/** The refusal that undici wrapped while connecting, if that is why the request failed. */
function refusalIn(err: unknown): SourceRefusedError | undefined {
  for (let e = err as { cause?: unknown } | undefined; e; e = e.cause as { cause?: unknown } | undefined) {
    if (e instanceof SourceRefusedError) return e;
  }
  return undefined;
}

/**
 * Streams a public http(s) source to `dest`, never holding it in memory. Every redirect hop is
 * checked like the first URL; the size cap holds whether or not the server sends a length.
 */
export async function downloadSource(source: string, dest: string, policy: DownloadPolicy, signal?: AbortSignal) {
  const dispatcher = new Agent({ connect: { lookup: guardedLookup(policy.allowLoopback) as never, timeout: 10_000 } });
  const timeout = AbortSignal.timeout(policy.timeoutMs);
  const combined = signal ? AbortSignal.any([signal, timeout]) : timeout;
  let url = assertAllowedUrl(source);
  try {
    for (let hop = 0; hop <= (policy.maxRedirects ?? 5); hop++) {
      checkLiteralHost(url, policy.allowLoopback);
      let res;
      try {
        res = await request(url, { dispatcher, signal: combined, maxRedirections: 0, headers: { "user-agent": "video-encoder/1" } });
      } catch (err) {
        throw refusalIn(err) ?? new DownloadError(`Download failed: ${describeNetworkError(err, timeout)}`);
      }
      if (res.statusCode >= 300 && res.statusCode < 400 && res.headers.location) {
        await res.body.dump();
        url = assertAllowedUrl(new URL(String(res.headers.location), url).toString());
        continue;
      }
      if (res.statusCode !== 200) {
        await res.body.dump();
        throw new DownloadError(`Download failed: the source answered HTTP ${res.statusCode}`);
      }
      const length = Number(res.headers["content-length"] ?? NaN);
      if (length > policy.maxBytes) {
        await res.body.dump();
        throw new SourceRefusedError(`Source refused: ${length} bytes is over the ${policy.maxBytes}-byte limit`);
      }
      let seen = 0;
      const cap = new Transform({
        transform(chunk: Buffer, _enc, done) {
          seen += chunk.length;
          if (seen > policy.maxBytes) done(new SourceRefusedError(`Source refused: larger than the ${policy.maxBytes}-byte limit`));
          else done(null, chunk);
        },
      });
      try {
        await pipeline(res.body, cap, createWriteStream(dest));
      } catch (err) {
        await rm(dest, { force: true });
        if (err instanceof SourceRefusedError) throw err;
        throw new DownloadError(`Download failed: ${describeNetworkError(err, timeout)}`);
      }
      return { bytes: seen, finalUrl: url.toString() };
    }
    throw new DownloadError("Download failed: too many redirects");
  } finally {
    await dispatcher.close();
  }
}

function describeNetworkError(err: unknown, timeout: AbortSignal): string {
  if (timeout.aborted) return "timed out";
  const e = err as { code?: string; cause?: { code?: string }; message?: string };
  const code = e.code ?? e.cause?.code;
  if (code === "ECONNREFUSED") return "connection refused";
  if (code === "ENOTFOUND" || code === "EAI_AGAIN") return "host not found";
  if (code === "ECONNRESET" || code === "UND_ERR_SOCKET") return "connection reset";
  if (code === "UND_ERR_CONNECT_TIMEOUT") return "connection timed out";
  return code ? `network error (${code})` : "network error";
}
