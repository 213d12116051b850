import { describe, expect, it } from "vitest";
import { renderMetadata, timelineRequest } from "../../../cli/timeline-file";

const edl = { version: "1.0", timeline: { tracks: [] }, metadata: { author: "the document's own" } };

describe("a timeline file", () => {
  it("holds the EDL document alone, its own metadata left inside it, or a request body {edl, metadata}", () => {
    expect(timelineRequest(edl)).toEqual({ edl });
    expect(timelineRequest({ edl, metadata: { name: "teaser" } })).toEqual({ edl, metadata: { name: "teaser" } });
    // Not an object the API could take: sent as the document, for the API to say what is wrong.
    expect(timelineRequest([edl])).toEqual({ edl: [edl] });
  });

  it("--name and --description replace the file's fields of those names, and keep the rest", () => {
    expect(renderMetadata({ name: "file", orderId: 7 }, { name: undefined, description: undefined })).toEqual({
      name: "file",
      orderId: 7,
    });
    expect(renderMetadata({ name: "file", orderId: 7 }, { name: "flag", description: undefined })).toEqual({
      name: "flag",
      orderId: 7,
    });
    expect(renderMetadata(undefined, { name: undefined, description: "flag" })).toEqual({ description: "flag" });
    expect(renderMetadata(undefined, {})).toBeUndefined();
  });
});
