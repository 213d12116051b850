/** "#RRGGBB" or "#RRGGBBAA" (as the validator stores them) → FFmpeg's 0xRRGGBB@alpha. */
export function ffColour(hex: string, opacity = 1): string {
  const rgb = hex.slice(1, 7);
  const ownAlpha = hex.length === 9 ? parseInt(hex.slice(7, 9), 16) / 255 : 1;
  return `0x${rgb}@${round(ownAlpha * opacity)}`;
}

export function round(n: number, digits = 4): number {
  return Number(n.toFixed(digits));
}
