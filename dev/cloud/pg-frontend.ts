/**
 * Follows the messages a Postgres client sends, only far enough to see the end of the session:
 * Terminate ('X'), or a CancelRequest, after which the client sends nothing more. Messages are
 * framed by their lengths; before the startup message they carry no type byte (SSLRequest,
 * GSSENCRequest and CancelRequest precede or replace it).
 */
export class FrontendSession {
  private startupDone = false;
  private header = Buffer.alloc(0);
  /** Bytes still to skip of the message being passed. */
  private remaining = 0;
  ended = false;
  /** Set when the stream stops looking like the protocol (TLS after an accepted SSLRequest): nothing more is inferred. */
  private lost = false;

  /** Feeds the next chunk; true once the client has ended its session. */
  push(chunk: Buffer): boolean {
    let offset = 0;
    while (!this.ended && !this.lost && offset < chunk.length) {
      if (this.remaining > 0) {
        const skip = Math.min(this.remaining, chunk.length - offset);
        this.remaining -= skip;
        offset += skip;
        continue;
      }
      const headerSize = this.startupDone ? 5 : 8;
      const take = Math.min(headerSize - this.header.length, chunk.length - offset);
      this.header = Buffer.concat([this.header, chunk.subarray(offset, offset + take)]);
      offset += take;
      if (this.header.length < headerSize) break;
      this.readHeader();
      this.header = Buffer.alloc(0);
    }
    return this.ended;
  }

  private readHeader() {
    if (this.startupDone) {
      const type = String.fromCharCode(this.header[0]);
      const length = this.header.readInt32BE(1);
      if (type === "X") this.ended = true;
      this.remaining = Math.max(0, length - 4);
      return;
    }
    const length = this.header.readInt32BE(0);
    const code = this.header.readInt32BE(4);
    if (code === CANCEL_REQUEST) this.ended = true;
    else if (code >>> 16 === PROTOCOL_MAJOR) this.startupDone = true;
    // SSLRequest and GSSENCRequest are answered with one byte and followed by the real startup.
    else if (code !== SSL_REQUEST && code !== GSSENC_REQUEST) this.lost = true;
    this.remaining = Math.max(0, length - 8);
  }
}

const PROTOCOL_MAJOR = 3;
const CANCEL_REQUEST = 80877102;
const SSL_REQUEST = 80877103;
const GSSENC_REQUEST = 80877104;
