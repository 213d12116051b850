import { describe, expect, it } from "vitest";
import { inputLinkSeconds, isUploadType, UPLOAD_INPUT_TTL_SECONDS, uploadTypeFor } from "../../../domain/uploads";

describe("uploads: the type an upload is stored as (docs/uploads.md#content-types)", () => {
  it("a type given is kept in lower case; none, or octet-stream, is named by the filename's extension", () => {
    expect(uploadTypeFor("Video/MP4", "x.mov")).toBe("video/mp4");
    expect(uploadTypeFor(undefined, "Interview.MOV")).toBe("video/quicktime");
    expect(uploadTypeFor("application/octet-stream", "talk.srt")).toBe("application/x-subrip");
    expect(uploadTypeFor(undefined, "archive.tar.mp4")).toBe("video/mp4");
    for (const filename of [
      undefined,
      "clip",
      "clip.",
      "page.html",
      "x.toString",
      "x.__proto__",
      "x.constructor",
      ".mp4x",
    ])
      expect(uploadTypeFor(undefined, filename), String(filename)).toBeUndefined();
    expect(uploadTypeFor("application/octet-stream", undefined)).toBeUndefined();
  });

  it("only video and audio types, the overlay images and the caption files are accepted", () => {
    for (const type of ["video/mp4", "video/x-matroska", "audio/flac", "image/png", "image/jpeg", "text/vtt"])
      expect(isUploadType(type), type).toBe(true);
    expect(isUploadType("application/x-subrip")).toBe(true);
    for (const type of [
      "text/html",
      "image/svg+xml",
      "application/xhtml+xml",
      "application/javascript",
      "text/javascript",
      "text/xml",
      "application/pdf",
      "image/gif",
      "application/octet-stream",
      "video/",
      "video",
      "videos/mp4",
      "video/mp4; codecs=avc1",
    ])
      expect(isUploadType(type), type).toBe(false);
  });
});

describe("uploads: the link to the object never outlives it", () => {
  const now = new Date("2026-11-20T09:30:00.400Z");
  it("7 days at most, else whole seconds until deleteAt, and 0 once it is due", () => {
    expect(inputLinkSeconds(new Date(now.getTime() + 30 * 86_400_000), now)).toBe(UPLOAD_INPUT_TTL_SECONDS);
    expect(inputLinkSeconds(new Date(now.getTime() + 3_600_999), now)).toBe(3600);
    expect(inputLinkSeconds(new Date(now.getTime() + 999), now)).toBe(0);
    expect(inputLinkSeconds(new Date(now.getTime() - 5000), now)).toBe(0);
    // Signed from the second `now` falls in, the link ends no later than deleteAt.
    for (const ms of [1000, 1001, 59_999, 3_600_000]) {
      const deleteAt = new Date(now.getTime() + ms);
      const signedAt = Math.floor(now.getTime() / 1000) * 1000;
      expect(signedAt + inputLinkSeconds(deleteAt, now) * 1000).toBeLessThanOrEqual(deleteAt.getTime());
    }
  });
});
