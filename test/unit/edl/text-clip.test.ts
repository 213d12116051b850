import { describe, expect, it } from "vitest";
import type { TextClip } from "../../../domain/edl/validated-edl";
import { validateEdl } from "../../../domain/edl/validate";
import { errorsOf, EXTRA0, textClip, withTrack } from "./fixtures";

const errorsFor = (fields: Record<string, unknown>) => errorsOf(withTrack("text", [textClip(fields)]));
const clipOf = (fields: Record<string, unknown>) =>
  validateEdl(withTrack("text", [textClip(fields)]), "free").edl?.timeline.tracks[1].clips[0] as TextClip | undefined;

describe("contract §3.14 Text clip › required fields", () => {
  it.each(["id", "text", "startTime", "duration"])("%s is required", (field) => {
    const clip: Record<string, unknown> = textClip();
    delete clip[field];
    expect(errorsOf(withTrack("text", [clip]))).toEqual([`${EXTRA0}.${field}: is required`]);
  });

  it("decision: text must not be blank", () => {
    expect(errorsFor({ text: " " })).toEqual([`${EXTRA0}.text: must not be empty`]);
    expect(errorsFor({ text: 5 })).toEqual([`${EXTRA0}.text: must be a string`]);
  });

  it("startTime at least 0, duration greater than 0", () => {
    expect(errorsFor({ startTime: -1, duration: 0 })).toEqual([
      `${EXTRA0}.startTime: must be between 0 and 360000`,
      `${EXTRA0}.duration: must be greater than 0 and at most 360000`,
    ]);
  });
});

describe("contract §3.14 Text clip › defaults", () => {
  it("fontSize 48, white, Arial, normal weight, centred, no decorations or fades", () => {
    expect(clipOf({ id: "title", text: "Hi" })).toEqual({
      id: "title",
      text: "Hi",
      startTime: 0,
      duration: 5,
      fontSize: 48,
      fontColor: "#FFFFFF",
      fontFamily: "Arial",
      fontWeight: "normal",
      textAlign: "center",
      position: { x: "center", y: "center" },
      fadeIn: 0,
      fadeOut: 0,
    });
  });
});

describe("contract §3.14 Text clip › fontSize in pixels", () => {
  it("decision: greater than 0 and at most 1000", () => {
    expect(errorsFor({ fontSize: 1000 })).toEqual([]);
    expect(errorsFor({ fontSize: 0 })).toEqual([`${EXTRA0}.fontSize: must be greater than 0 and at most 1000`]);
    expect(errorsFor({ fontSize: 1001 })).toEqual([`${EXTRA0}.fontSize: must be greater than 0 and at most 1000`]);
  });
});

describe("contract §3.14 Text clip › fontColor, a hex colour", () => {
  it.each([
    ["#fff", "#FFFFFF"],
    ["#12ab9F", "#12AB9F"],
    ["#00000080", "#00000080"],
  ])("%s is accepted as %s", (fontColor, normalised) => {
    expect(clipOf({ fontColor })?.fontColor).toBe(normalised);
  });

  it.each(["white", "fff", "#ffff", "#12345", "#GGGGGG", "rgb(0,0,0)", 0xffffff])("%j is rejected", (fontColor) => {
    expect(errorsFor({ fontColor })).toEqual([
      `${EXTRA0}.fontColor: must be a hex colour such as "#FFF", "#FFFFFF" or "#FFFFFF80"`,
    ]);
  });
});

describe("contract §3.14 Text clip › fontFamily, fontWeight, textAlign", () => {
  it("fontFamily is a non-blank string of at most 100 characters (fc-match takes it as an argument)", () => {
    expect(clipOf({ fontFamily: "DejaVu Sans" })?.fontFamily).toBe("DejaVu Sans");
    expect(errorsFor({ fontFamily: "" })).toEqual([`${EXTRA0}.fontFamily: must not be empty`]);
    expect(clipOf({ fontFamily: "F".repeat(100) })?.fontFamily).toHaveLength(100);
    expect(errorsFor({ fontFamily: "F".repeat(101) })).toEqual([
      `${EXTRA0}.fontFamily: must be at most 100 characters`,
    ]);
  });

  it("fontWeight is normal or bold", () => {
    expect(clipOf({ fontWeight: "bold" })?.fontWeight).toBe("bold");
    expect(errorsFor({ fontWeight: 700 })).toEqual([`${EXTRA0}.fontWeight: must be one of normal, bold`]);
  });

  it("textAlign is left, center or right", () => {
    expect(clipOf({ textAlign: "left" })?.textAlign).toBe("left");
    expect(errorsFor({ textAlign: "justify" })).toEqual([`${EXTRA0}.textAlign: must be one of left, center, right`]);
  });
});

describe("contract §3.14 Text clip › position, numbers or keywords", () => {
  it("is read like an overlay's", () => {
    expect(clipOf({ position: { x: 40, y: "bottom" } })?.position).toEqual({ x: 40, y: "bottom" });
    expect(errorsFor({ position: { x: "middle" } })).toEqual([
      `${EXTRA0}.position.x: must be a number from -16384 to 16384 or one of center, left, right, top, bottom`,
    ]);
  });
});

describe("contract §3.14 Text clip › background, outline, shadow", () => {
  it("decision: given parts are kept, missing parts get defaults", () => {
    expect(clipOf({ background: { color: "#333" }, outline: { width: 3 }, shadow: { offsetY: 4 } })).toMatchObject({
      background: { color: "#333333", opacity: 0.5, padding: 10 },
      outline: { color: "#000000", width: 3 },
      shadow: { color: "#000000", offsetX: 2, offsetY: 4, blur: 0 },
    });
  });

  it("decision: a shadow blur is accepted and drawn sharp, with a warning", () => {
    const blurred = validateEdl(withTrack("text", [textClip({ shadow: { blur: 4 } })]), "free");
    expect(blurred.valid).toBe(true);
    expect(blurred.warnings).toEqual([`${EXTRA0}.shadow.blur: shadow blur is not applied; the shadow is drawn sharp`]);
    expect(validateEdl(withTrack("text", [textClip({ shadow: { blur: 0 } })]), "free").warnings).toEqual([]);
  });

  it("each part is checked", () => {
    expect(
      errorsFor({
        background: { color: "black", opacity: 2, padding: -1 },
        outline: { color: 1, width: -1 },
        shadow: { offsetX: "2", blur: -1 },
      }),
    ).toEqual([
      `${EXTRA0}.background.color: must be a hex colour such as "#FFF", "#FFFFFF" or "#FFFFFF80"`,
      `${EXTRA0}.background.opacity: must be between 0 and 1`,
      `${EXTRA0}.background.padding: must be between 0 and 500`,
      `${EXTRA0}.outline.color: must be a hex colour such as "#FFF", "#FFFFFF" or "#FFFFFF80"`,
      `${EXTRA0}.outline.width: must be between 0 and 100`,
      `${EXTRA0}.shadow.offsetX: must be a number`,
      `${EXTRA0}.shadow.blur: must be between 0 and 100`,
    ]);
  });

  it("each must be an object", () => {
    expect(errorsFor({ background: "#000", outline: [], shadow: true })).toEqual([
      `${EXTRA0}.background: must be an object`,
      `${EXTRA0}.outline: must be an object`,
      `${EXTRA0}.shadow: must be an object`,
    ]);
  });
});

describe("contract §3.14 Text clip › fades", () => {
  it("at least 0 and together no longer than duration", () => {
    expect(errorsFor({ fadeIn: 1, fadeOut: 1, duration: 2 })).toEqual([]);
    expect(errorsFor({ fadeIn: -1 })).toEqual([`${EXTRA0}.fadeIn: must be between 0 and 360000`]);
    expect(errorsFor({ fadeIn: 3, duration: 2 })).toEqual([
      `${EXTRA0}.fadeOut: fadeIn and fadeOut together must not exceed duration`,
    ]);
  });
});
