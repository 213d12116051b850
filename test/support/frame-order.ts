/**
 * Whether an output shows every source frame exactly once, in order: `numbers` as
 * readFrameNumbers (frame-numbers.ts) returns them, one per output frame, null where unreadable.
 * null when the output is whole; otherwise a sentence naming the first fault, for a test's message.
 */
export function frameOrderProblem(numbers: readonly (number | null)[], expectedCount: number): string | null {
  const seen = new Map<number, number>();
  for (let i = 0; i < numbers.length; i++) {
    const n = numbers[i];
    if (n === null) return `output frame ${i} shows no readable frame number`;
    const before = seen.get(n);
    if (before !== undefined) return `source frame ${n} is shown twice, as output frames ${before} and ${i}`;
    if (n >= expectedCount)
      return `output frame ${i} shows source frame ${n}, past the source's last (${expectedCount - 1})`;
    seen.set(n, i);
    if (n !== i) {
      // Either frames before it are missing or it came early: tell which by whether the frame it
      // should have been turns up later.
      const later = numbers.indexOf(i, i + 1);
      return later === -1
        ? `source frame ${i} is missing (output frame ${i} shows source frame ${n})`
        : `source frame ${i} is out of order: output frame ${i} shows source frame ${n}, frame ${i} comes at output frame ${later}`;
    }
  }
  if (numbers.length < expectedCount)
    return `source frames ${numbers.length}–${expectedCount - 1} are missing (the output ends after ${numbers.length} frames)`;
  return null;
}
