import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { encoderDeliveryUrl } from "../../../domain/jobs";
import { routeUrl } from "../../../domain/urls";

/**
 * The encoder's delivery URL, which the Worker publishes to and the encoder expects QStash's
 * signature to name: the same text from any spelling of one address in the two settings.
 */
describe("encoderDeliveryUrl", () => {
  it("appends the delivery route to the base", () => {
    expect(encoderDeliveryUrl("https://video-encoder.fly.dev")).toBe("https://video-encoder.fly.dev/deliveries/jobs");
    expect(encoderDeliveryUrl("http://127.0.0.1:8080")).toBe("http://127.0.0.1:8080/deliveries/jobs");
  });

  it("gives one URL for every spelling of one address: trailing slashes, the host's case, the default port", () => {
    const spellings = [
      "https://video-encoder.fly.dev",
      "https://video-encoder.fly.dev/",
      "https://Video-Encoder.FLY.dev//",
      "https://video-encoder.fly.dev:443",
      "HTTPS://video-encoder.fly.dev:443/",
    ];
    expect(new Set(spellings.map(encoderDeliveryUrl))).toEqual(
      new Set(["https://video-encoder.fly.dev/deliveries/jobs"]),
    );
  });

  it("the Worker's QStash routes are built the same way from its PUBLIC_URL", () => {
    const spellings = ["https://api.example.com", "https://API.example.com/", "https://api.example.com:443//"];
    expect(new Set(spellings.map((base) => routeUrl(base, "/internal/webhook-deliveries")))).toEqual(
      new Set(["https://api.example.com/internal/webhook-deliveries"]),
    );
  });

  it("keeps a path the base has (an encoder behind a proxy that serves it under one), and drops a query or fragment", () => {
    expect(encoderDeliveryUrl("https://proxy.example.com/encoder/")).toBe(
      "https://proxy.example.com/encoder/deliveries/jobs",
    );
    expect(encoderDeliveryUrl("https://proxy.example.com/encoder?x=1#y")).toBe(
      "https://proxy.example.com/encoder/deliveries/jobs",
    );
  });

  it("is what the URL parser makes of its own answer: publishing and checking never disagree on the text", () => {
    fc.assert(
      fc.property(fc.webUrl({ withQueryParameters: true, withFragments: true }), (base) => {
        const url = encoderDeliveryUrl(base);
        expect(new URL(url).href).toBe(url);
        expect(url.endsWith("/deliveries/jobs")).toBe(true);
        expect(encoderDeliveryUrl(`${base.split(/[?#]/)[0]}/`)).toBe(url);
      }),
    );
  });
});
