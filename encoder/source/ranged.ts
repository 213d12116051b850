/**
 * A source read by byte ranges instead of downloaded first (docs/playback.md#the-start-does-not-wait-for-the-whole-source):
 * FFmpeg and ffprobe read it over HTTP from a loopback proxy of the encoder's own, which asks the
 * origin for each range through the source guard (every connection's addresses checked, every
 * redirect hop too) and within the size cap. So a long source's first segments are made from its
 * first bytes, and a part reads only its own span. FFmpeg reads the proxy as a ranged input
 * (ffmpeg/args/command.ts: http and container demuxers only).
 */
import { randomBytes } from "node:crypto";
import { once } from "node:events";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { JobFailure } from "../failure";
import type { FfmpegInput } from "../ffmpeg/args/command";
import { type ProbedSource, probeSource } from "../ffmpeg/probe";
import type { RunOptions } from "../ffmpeg/run";
import { httpRequest, readBody } from "../http/client";
import { type DownloadPolicy, describeNetworkError, describeStall, guardedGet } from "./download";
import { assertSelfContainedHead } from "./self-contained";

/** A source the origin serves by ranges: where it is (after redirects) and how long. */
export interface RangedSource {
  url: string;
  size: number;
}

/** The connection's longest silence while the proxy waits on the origin. */
const ORIGIN_IDLE_MS = 60_000;
/** A read's first request to the origin, and the most any later one asks: each twice the one before. */
const FIRST_CHUNK_BYTES = 512 * 1024;
const MAX_CHUNK_BYTES = 2 * 1024 * 1024;

/**
 * Asks the origin for the first byte: a 206 with the file's length means it serves ranges.
 * Null when it does not (a 200 with the whole file, or no length): the caller downloads it.
 * Refusals (an address, a size over the cap) are thrown as the source guard throws them.
 */
export async function openRanged(
  source: string,
  policy: DownloadPolicy,
  signal?: AbortSignal,
): Promise<RangedSource | null> {
  let answer: Awaited<ReturnType<typeof guardedGet>>;
  // An answer that trickles in (its status line and headers a byte at a time) is given the stall window a download's bytes are.
  const stalled = policy.minRate ? AbortSignal.timeout(policy.minRate.windowMs) : undefined;
  try {
    answer = await guardedGet(source, policy, {
      headers: { range: "bytes=0-0" },
      signal: AbortSignal.any([...(signal ? [signal] : []), ...(stalled ? [stalled] : [])]),
      idleTimeoutMs: ORIGIN_IDLE_MS,
    });
  } catch (err) {
    if (err instanceof JobFailure || signal?.aborted) throw signal?.aborted ? signal.reason : err;
    if (stalled?.aborted && policy.minRate) throw JobFailure.download(describeStall(policy.minRate), err);
    throw JobFailure.download(describeNetworkError(err), err);
  }
  const { res, url } = answer;
  res.body.destroy();
  const total = /^bytes 0-0\/(\d+)$/.exec(String(res.headers["content-range"] ?? ""));
  if (res.status === 206 && total) {
    const size = Number(total[1]);
    if (size > policy.maxBytes)
      throw JobFailure.sourceRefused(`${size} bytes is over the ${policy.maxBytes}-byte limit`);
    return { url: url.toString(), size };
  }
  if (res.status === 200 || res.status === 206) return null;
  throw JobFailure.download(`the source answered HTTP ${res.status}`);
}

/** The byte range a request asks for, within a file of `size` bytes; null for none or one that cannot be served. */
function requestedRange(header: string | undefined, size: number): { start: number; end: number } | null {
  if (header === undefined) return { start: 0, end: size - 1 };
  const match = /^bytes=(\d*)-(\d*)$/.exec(header.trim());
  if (!match || (match[1] === "" && match[2] === "")) return null;
  if (match[1] === "") {
    const suffix = Math.min(Number(match[2]), size);
    return suffix > 0 ? { start: size - suffix, end: size - 1 } : null;
  }
  const start = Number(match[1]);
  const end = match[2] === "" ? size - 1 : Math.min(Number(match[2]), size - 1);
  return start <= end && start < size ? { start, end } : null;
}

export interface RangeProxy {
  /** The URL FFmpeg reads the source at: loopback, with a path no other process can guess. */
  url: string;
  /** Up to `length` bytes from `offset`, as FFmpeg would read them (the sniff reads the head so). */
  read(offset: number, length: number): Promise<Uint8Array>;
  /** Bytes the proxy has passed on so far. */
  bytesServed(): number;
  close(): Promise<void>;
}

/**
 * Serves the source to FFmpeg over loopback, each request's range fetched from the origin as it
 * is asked for. A failure at the origin ends that response early, which FFmpeg reports as the
 * read error it is.
 */
export async function serveRanges(
  source: RangedSource,
  policy: DownloadPolicy,
  signal?: AbortSignal,
): Promise<RangeProxy> {
  const path = `/${randomBytes(16).toString("hex")}`;
  let served = 0;
  const open = new Set<AbortController>();
  const answer = async (req: IncomingMessage, res: ServerResponse) => {
    if (req.url !== path || (req.method !== "GET" && req.method !== "HEAD")) return res.writeHead(404).end();
    const range = requestedRange(req.headers.range, source.size);
    if (!range) return res.writeHead(416, { "content-range": `bytes */${source.size}` }).end();
    const length = range.end - range.start + 1;
    const headers = {
      "accept-ranges": "bytes",
      "content-length": String(length),
      "content-type": "application/octet-stream",
      ...(req.headers.range ? { "content-range": `bytes ${range.start}-${range.end}/${source.size}` } : {}),
    };
    if (req.method === "HEAD") return res.writeHead(req.headers.range ? 206 : 200, headers).end();
    const stop = new AbortController();
    open.add(stop);
    req.once("close", () => stop.abort());
    try {
      res.writeHead(req.headers.range ? 206 : 200, headers);
      // The origin is asked in growing chunks, not for the rest of the file at once: FFmpeg often
      // reads a little and seeks away (an index at the end, a part's keyframe), and the bytes in
      // flight of a request it abandons are read for nothing.
      let chunk = FIRST_CHUNK_BYTES;
      for (
        let at = range.start;
        at <= range.end && !stop.signal.aborted;
        at += chunk, chunk = Math.min(chunk * 2, MAX_CHUNK_BYTES)
      ) {
        const last = Math.min(range.end, at + chunk - 1);
        const { res: origin } = await guardedGet(source.url, policy, {
          headers: { range: `bytes=${at}-${last}` },
          signal: AbortSignal.any([stop.signal, ...(signal ? [signal] : [])]),
          idleTimeoutMs: ORIGIN_IDLE_MS,
        });
        if (origin.status !== 206) {
          origin.body.destroy();
          throw new Error(`the origin answered ${origin.status} to a range`);
        }
        for await (const bytes of origin.body as AsyncIterable<Buffer>) {
          served += bytes.length;
          if (!res.write(bytes)) await once(res, "drain", { signal: stop.signal });
        }
      }
      res.end();
    } catch {
      // The origin failed, or FFmpeg closed its end (a seek): either way this response is over.
      res.destroy();
    } finally {
      open.delete(stop);
    }
  };
  const server = createServer((req, res) => void answer(req, res));
  await new Promise<void>((resolve, reject) => server.once("error", reject).listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  const url = `http://127.0.0.1:${port}${path}`;
  return {
    url,
    read: async (offset, length) => {
      if (offset >= source.size) return new Uint8Array(0);
      const end = Math.min(source.size, offset + length) - 1;
      const res = await httpRequest(url, { headers: { range: `bytes=${offset}-${end}` }, signal });
      const body = await readBody(res, length);
      if (res.status !== 206) throw JobFailure.download(`the source answered HTTP ${res.status} to a range`);
      return body;
    },
    bytesServed: () => served,
    close: () =>
      new Promise<void>((resolve) => {
        for (const stop of open) stop.abort();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/**
 * The source behind `proxy` sniffed (a manifest or playlist is refused, as a downloaded one is)
 * and probed, as FFmpeg reads it by ranges. Null for a container outside the ranged reader's list,
 * which fails to probe so: the caller downloads the source instead.
 */
export async function probeRanged(
  proxy: RangeProxy,
  options: RunOptions,
): Promise<{ input: FfmpegInput; probed: ProbedSource } | null> {
  await assertSelfContainedHead(proxy.read);
  const input = { path: proxy.url, ranged: true };
  const probed = await probeSource(input, options).catch((err) => {
    if (err instanceof JobFailure && err.kind === "ffmpeg") return null;
    throw err;
  });
  return probed && { input, probed };
}
