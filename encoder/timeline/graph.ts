import type { FfmpegInput } from "../ffmpeg/args/command";

/** Collects inputs and filter chains for one FFmpeg invocation; labels are unique per graph. */
export class GraphBuilder {
  private readonly added: FfmpegInput[] = [];
  private readonly chains: string[] = [];
  private next = 0;

  /** Adds an input; returns its index. */
  input(input: FfmpegInput): number {
    this.added.push(input);
    return this.added.length - 1;
  }

  label(prefix: string): string {
    return `[${prefix}${this.next++}]`;
  }

  /** `from` (a pad label, or "" for a source filter), then `filters` in order; returns the output label. */
  chain(from: string, filters: string[], prefix: string): string {
    const out = this.label(prefix);
    this.chains.push(`${from}${filters.join(",")}${out}`);
    return out;
  }

  add(chain: string): void {
    this.chains.push(chain);
  }

  inputs(): readonly FfmpegInput[] {
    return this.added;
  }

  filterGraph(): string {
    return this.chains.join(";");
  }
}
