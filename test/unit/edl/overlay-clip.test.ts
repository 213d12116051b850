import { describe, expect, it } from "vitest";
import type { OverlayClip } from "../../../domain/edl/validated-edl";
import { validateEdl } from "../../../domain/edl/validate";
import { errorsOf, EXTRA0, overlayClip, withTrack } from "./fixtures";

const errorsFor = (fields: Record<string, unknown>) => errorsOf(withTrack("overlay", [overlayClip(fields)]));
const clipOf = (fields: Record<string, unknown>) =>
  validateEdl(withTrack("overlay", [overlayClip(fields)]), "free").edl?.timeline.tracks[1].clips[0] as
    | OverlayClip
    | undefined;

describe("contract §3.13 Overlay clip › required fields", () => {
  it.each(["id", "src", "startTime", "duration"])("%s is required", (field) => {
    const clip: Record<string, unknown> = overlayClip();
    delete clip[field];
    expect(errorsOf(withTrack("overlay", [clip]))).toEqual([`${EXTRA0}.${field}: is required`]);
  });

  it("src must be an absolute http(s) URL (decision: the image type is checked when fetched)", () => {
    expect(errorsFor({ src: "logo.png" })).toEqual([
      `${EXTRA0}.src: must be an absolute http or https URL without a user name or password, at a public address`,
    ]);
    expect(errorsFor({ src: "https://cdn.example.com/image?id=3" })).toEqual([]);
  });

  it("startTime must be at least 0", () => {
    expect(errorsFor({ startTime: -1 })).toEqual([`${EXTRA0}.startTime: must be between 0 and 360000`]);
  });

  it("decision: duration must be greater than 0", () => {
    expect(errorsFor({ duration: 0 })).toEqual([`${EXTRA0}.duration: must be greater than 0 and at most 360000`]);
    expect(errorsFor({ duration: -2 })).toEqual([`${EXTRA0}.duration: must be greater than 0 and at most 360000`]);
  });
});

describe("contract §3.13 Overlay clip › defaults", () => {
  it("opacity 1, no fades, normal blending, centred, natural size", () => {
    expect(clipOf({ id: "logo" })).toEqual({
      id: "logo",
      src: "https://media.example.com/logo.png",
      startTime: 0,
      duration: 5,
      position: { x: "center", y: "center" },
      opacity: 1,
      fadeIn: 0,
      fadeOut: 0,
      blendMode: "normal",
    });
  });
});

describe("contract §3.13 Overlay clip › opacity 0.0 to 1.0 (contract §9.1 Limits › Overlay opacity)", () => {
  it.each([0, 0.5, 1])("opacity %s is accepted", (opacity) => {
    expect(errorsFor({ opacity })).toEqual([]);
  });

  it.each([-0.1, 1.01, 50])("opacity %s is rejected", (opacity) => {
    expect(errorsFor({ opacity })).toEqual([`${EXTRA0}.opacity: must be between 0 and 1`]);
  });
});

describe("contract §3.13 Overlay clip › position {x, y}: numbers or keywords", () => {
  it("numbers (negative ones too, partly off-frame) and keywords are kept", () => {
    expect(clipOf({ position: { x: -20, y: "bottom" } })?.position).toEqual({ x: -20, y: "bottom" });
    expect(clipOf({ position: { x: "right", y: 10 } })?.position).toEqual({ x: "right", y: 10 });
  });

  it("decision: numbers stay within ±16384 pixels", () => {
    expect(errorsFor({ position: { x: -16384, y: 16384 } })).toEqual([]);
    expect(errorsFor({ position: { x: 16385 } })).toEqual([
      `${EXTRA0}.position.x: must be a number from -16384 to 16384 or one of center, left, right, top, bottom`,
    ]);
  });

  it("a missing axis is centred", () => {
    expect(clipOf({ position: { x: "left" } })?.position).toEqual({ x: "left", y: "center" });
  });

  it("either axis accepts all five keywords; one naming the other axis centres, with a warning", () => {
    expect(errorsFor({ position: { x: "top", y: "left" } })).toEqual([]);
    expect(clipOf({ position: { x: "top", y: "left" } })?.position).toEqual({ x: "center", y: "center" });
    expect(clipOf({ position: { x: "right", y: "bottom" } })?.position).toEqual({ x: "right", y: "bottom" });
    expect(errorsFor({ position: { x: "middle" } })).toEqual([
      `${EXTRA0}.position.x: must be a number from -16384 to 16384 or one of center, left, right, top, bottom`,
    ]);
  });

  it("position must be an object", () => {
    expect(errorsFor({ position: "center" })).toEqual([`${EXTRA0}.position: must be an object`]);
  });
});

describe("contract §3.13 Overlay clip › size {width, height}: pixels or a percentage string", () => {
  it("pixels and percentages are parsed", () => {
    expect(clipOf({ size: { width: 320, height: "25%" } })?.size).toEqual({
      width: { unit: "px", value: 320 },
      height: { unit: "percent", value: 25 },
    });
  });

  it("decision: one side alone keeps the aspect ratio; an empty size is natural size", () => {
    expect(clipOf({ size: { width: "50%" } })?.size).toEqual({ width: { unit: "percent", value: 50 } });
    expect(clipOf({ size: {} })).not.toHaveProperty("size");
  });

  it("decision: pixels up to 16384, percentages up to 1000%", () => {
    expect(errorsFor({ size: { width: 16384, height: "1000%" } })).toEqual([]);
  });

  it.each([0, -5, 16385, "1001%", "50", "50 %", "0%", "%", "abc", true])("%j is rejected", (width) => {
    expect(errorsFor({ size: { width } })).toEqual([
      `${EXTRA0}.size.width: must be a number of pixels above 0 and up to 16384, or a percentage such as "50%" up to 1000%`,
    ]);
  });
});

describe("contract §3.13 Overlay clip › fades", () => {
  it("fadeIn and fadeOut are at least 0", () => {
    expect(errorsFor({ fadeIn: -1 })).toEqual([`${EXTRA0}.fadeIn: must be between 0 and 360000`]);
    expect(errorsFor({ fadeOut: -1 })).toEqual([`${EXTRA0}.fadeOut: must be between 0 and 360000`]);
  });

  it("decision: fadeIn plus fadeOut may not exceed duration", () => {
    expect(errorsFor({ duration: 4, fadeIn: 2, fadeOut: 2 })).toEqual([]);
    expect(errorsFor({ duration: 4, fadeIn: 2, fadeOut: 2.5 })).toEqual([
      `${EXTRA0}.fadeOut: fadeIn and fadeOut together must not exceed duration`,
    ]);
  });
});

describe("contract §3.13 Overlay clip › blendMode", () => {
  it.each(["normal", "multiply", "screen", "overlay", "darken", "lighten"])("%s is accepted", (blendMode) => {
    expect(clipOf({ blendMode })?.blendMode).toBe(blendMode);
  });

  it("others are rejected", () => {
    expect(errorsFor({ blendMode: "difference" })).toEqual([
      `${EXTRA0}.blendMode: must be one of normal, multiply, screen, overlay, darken, lighten`,
    ]);
  });
});
