/**
 * Seconds as FFmpeg's time options and expressions take them: fixed-point, to the microsecond
 * (FFmpeg's own time base), trailing zeros dropped. `String(1e-7)` is "1e-7", which FFmpeg's
 * time parser refuses.
 */
export function ffSeconds(seconds: number): string {
  const fixed = seconds.toFixed(6).replace(/\.?0+$/, "");
  return fixed === "-0" ? "0" : fixed;
}
