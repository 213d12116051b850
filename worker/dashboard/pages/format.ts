/** How the dashboard writes times and sizes: UTC, like the API, to the minute. */
export function formatTime(date: Date | null): string {
  return date ? `${date.toISOString().slice(0, 16).replace("T", " ")} UTC` : "—";
}

/** Seconds as m:ss or h:mm:ss. */
export function formatDuration(seconds: number | null): string {
  if (seconds === null) return "—";
  const total = Math.round(seconds);
  const h = Math.floor(total / 3600);
  const m = Math.floor((total % 3600) / 60);
  const s = String(total % 60).padStart(2, "0");
  return h > 0 ? `${h}:${String(m).padStart(2, "0")}:${s}` : `${m}:${s}`;
}

export function formatPercent(fraction: number | null): string {
  return fraction === null ? "" : `${Math.floor(fraction * 100)}%`;
}
