/**
 * atempo factors whose product is `speed`: a single instance above 2 (or below 0.5) drops
 * samples, so whole factors of 2 (or 0.5) come first and the remainder last.
 */
export function atempoChain(speed: number): number[] {
  const factors: number[] = [];
  let rest = speed;
  while (rest > 2) {
    factors.push(2);
    rest /= 2;
  }
  while (rest < 0.5) {
    factors.push(0.5);
    rest /= 0.5;
  }
  if (Math.abs(rest - 1) > 1e-9) factors.push(Number(rest.toFixed(6)));
  return factors;
}

export const SAMPLE_RATE = 48000;

/** Every audio segment is brought to one format so concat and the muxer never resample mid-stream. */
export const AUDIO_FORMAT = `aresample=${SAMPLE_RATE},aformat=sample_fmts=fltp:channel_layouts=stereo`;

export function silence(samples: number): string {
  return `anullsrc=r=${SAMPLE_RATE}:cl=stereo,atrim=end_sample=${samples}`;
}
