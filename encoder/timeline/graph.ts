/** Collects inputs and filter chains for one FFmpeg invocation; labels are unique per graph. */
export class GraphBuilder {
  private readonly inputs: string[][] = [];
  private readonly chains: string[] = [];
  private next = 0;

  /** Adds an input (its options and `-i path`); returns its index. Only the file protocol is allowed. */
  input(args: string[]): number {
    this.inputs.push(["-protocol_whitelist", "file", ...args]);
    return this.inputs.length - 1;
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

  inputArgs(): string[] {
    return this.inputs.flat();
  }

  filterGraph(): string {
    return this.chains.join(";");
  }
}
