import { describe, expect, it } from "vitest";
import { frameOrderProblem } from "../../support/frame-order.ts";

const frames = (count: number) => Array.from({ length: count }, (_, i) => i);

describe("frameOrderProblem", () => {
  it("passes every frame once, in order", () => {
    expect(frameOrderProblem(frames(10), 10)).toBeNull();
  });

  it("names a dropped frame", () => {
    const dropped = frames(10).filter((n) => n !== 4);
    expect(frameOrderProblem(dropped, 10)).toBe("source frame 4 is missing (output frame 4 shows source frame 5)");
  });

  it("names a repeated frame", () => {
    const repeated = [0, 1, 2, 3, 3, 4, 5, 6, 7, 8, 9];
    expect(frameOrderProblem(repeated, 10)).toBe("source frame 3 is shown twice, as output frames 3 and 4");
  });

  it("names two frames swapped", () => {
    const swapped = [0, 1, 2, 4, 3, 5, 6, 7, 8, 9];
    expect(frameOrderProblem(swapped, 10)).toBe(
      "source frame 3 is out of order: output frame 3 shows source frame 4, frame 3 comes at output frame 4",
    );
  });

  it("names frames missing at the end and a frame past the source's last", () => {
    expect(frameOrderProblem(frames(8), 10)).toBe("source frames 8–9 are missing (the output ends after 8 frames)");
    expect(frameOrderProblem(frames(11), 10)).toBe("output frame 10 shows source frame 10, past the source's last (9)");
  });

  it("names an unreadable frame", () => {
    expect(frameOrderProblem([0, 1, null, 3], 4)).toBe("output frame 2 shows no readable frame number");
  });
});
