/** ISO 8601 UTC with milliseconds and Z, or null (docs/contract.md §2.2). */
export function iso(date: Date): string;
export function iso(date: Date | null | undefined): string | null;
export function iso(date: Date | null | undefined): string | null {
  return date ? date.toISOString() : null;
}

/** The quota period a moment falls in: the calendar month in UTC, "YYYY-MM". */
export function quotaPeriod(now: Date): string {
  return now.toISOString().slice(0, 7);
}
