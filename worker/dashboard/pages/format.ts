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

const BYTE_UNITS = ["bytes", "KiB", "MiB", "GiB"];

/** Bytes in the largest binary unit that keeps a number of at least 1: "1 GiB", "8.5 MiB". */
export function formatBytes(bytes: number): string {
  let value = bytes;
  let unit = 0;
  for (; value >= 1024 && unit < BYTE_UNITS.length - 1; unit += 1) value /= 1024;
  return `${Number.isInteger(value) ? value : value.toFixed(1)} ${BYTE_UNITS[unit]}`;
}
