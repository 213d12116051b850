import { mkdir } from "node:fs/promises";
import { chromium } from "playwright-core";
import { describe, expect, it } from "vitest";
import { expectStatus } from "../support/api-client";
import { api, stack } from "./harness";

const ENDPOINTS = [
  ["POST", "/jobs"],
  ["GET", "/jobs"],
  ["GET", "/jobs/{id}"],
  ["DELETE", "/jobs/{id}"],
  ["GET", "/jobs/{id}/download-url"],
  ["POST", "/edl"],
  ["PUT", "/edl"],
  ["GET", "/presets"],
  ["POST", "/uploads"],
  ["GET", "/uploads/{id}"],
  ["POST", "/uploads/{id}/complete"],
] as const;

describe("the reference at /docs", () => {
  it("serves the OpenAPI document and the reference's script itself, without a key", async () => {
    const doc = await api().raw<{ openapi: string }>({ method: "GET", path: "/api/v1/openapi.json" });
    expectStatus(doc, 200);
    expect(doc.body.openapi).toBe("3.1.0");
    const page = await api().raw({ method: "GET", path: "/docs" });
    expect(page.headers.get("content-type")).toMatch(/text\/html/);
    const html = page.text;
    expect(html).toContain('src="/docs/scalar.js"');
    expect(html).not.toMatch(/cdn\.jsdelivr|unpkg\.com/);
    const script = await api().raw({ method: "GET", path: "/docs/scalar.js" });
    expect(script.headers.get("content-type")).toMatch(/javascript/);
    expect(script.text.length).toBeGreaterThan(1_000_000);
  });

  it("renders in headless Chromium with every request outside this machine blocked, listing all eight endpoints", async () => {
    const browser = await chromium.launch({
      executablePath: process.env.CHROMIUM_PATH ?? "/usr/bin/chromium",
      args: [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
      ],
    });
    try {
      const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
      const origin = new URL(stack.apiUrl).origin;
      const outside: string[] = [];
      await page.route("**/*", (route) => {
        const url = route.request().url();
        if (url.startsWith(origin) || url.startsWith("data:") || url.startsWith("blob:")) return route.continue();
        outside.push(url);
        return route.abort();
      });
      await page.goto(`${stack.apiUrl}/docs`);
      await page.getByText("Video encoding API", { exact: false }).first().waitFor({ timeout: 30_000 });
      // Each tag's section lists its operations as the method above the path.
      const listed = (text: string, method: string, path: string) =>
        new RegExp(`^${method}\\n${path.replace(/[{}]/g, "\\$&")}$`, "m").test(text);
      await expect
        .poll(
          async () => {
            // biome-ignore lint/performance/useDomNodeTextContent: Playwright's innerText(), whose line breaks the check reads.
            const text = await page.locator("body").innerText();
            return ENDPOINTS.filter(([method, path]) => !listed(text, method, path)).map(
              ([method, path]) => `${method} ${path}`,
            );
          },
          { timeout: 30_000 },
        )
        .toEqual([]);
      // The sidebar, every tag open, names each operation by its summary.
      // biome-ignore lint/performance/useDomNodeTextContent: Playwright's innerText(): the text as shown, hidden parts left out.
      const sidebar = await page.locator("nav, aside").first().innerText();
      for (const summary of [
        "Create an encoding job",
        "List jobs",
        "Read a job",
        "Cancel a job",
        "Sign a fresh download link",
        "Create a timeline job",
        "Validate a timeline",
        "List presets",
        "Upload a file directly",
        "Read an upload",
        "Complete a multipart upload",
      ]) {
        expect(sidebar).toContain(summary);
      }
      await mkdir("test-artifacts", { recursive: true });
      await page.screenshot({ path: "test-artifacts/docs-reference.png", fullPage: false });
      // The document and the script came from this service; nothing the page needs is elsewhere.
      expect(outside.filter((url) => /openapi\.json|\.js$|\.css$/.test(new URL(url).pathname))).toEqual([]);
    } finally {
      await browser.close();
    }
  });
});
