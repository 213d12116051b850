/** The nearest even size, at least 2: yuv420p halves chroma both ways, so encoders refuse odd sides. */
export const even = (x: number) => Math.max(2, 2 * Math.round(x / 2));
