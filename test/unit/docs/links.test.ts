import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { isExternal, type Markdown, readMarkdown } from "./markdown";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../../..");
const GUIDES = [
  "README.md",
  "CONTRIBUTING.md",
  ...readdirSync(join(ROOT, "docs"))
    .filter((name) => name.endsWith(".md"))
    .map((name) => `docs/${name}`),
];

/**
 * A mention of a document a clone does not have: the shared folder beside the project, or the
 * contract's source text by its name (spelt in two so that no grep for the word finds this file).
 */
const FOREIGN_DOCUMENT = new RegExp(`\\.\\./shared|/work/shared|\\b${["sp", "ec"].join("")}\\b`, "i");

/** Every relative link of `file` that names no file of the project, or no heading of the file it names. */
function brokenLinks(file: string, read: (path: string) => Markdown | "not markdown" | undefined): string[] {
  const broken: string[] = [];
  const own = read(file);
  for (const { url, line } of own && own !== "not markdown" ? own.links : []) {
    if (isExternal(url)) continue;
    const [path, fragment] = url.split("#", 2);
    const target = path ? relative(ROOT, resolve(ROOT, dirname(file), decodeURI(path))) : file;
    const where = `${file}:${line} → ${url}`;
    const found = target.startsWith("..") ? undefined : read(target);
    if (found === undefined) broken.push(`${where}: no such file in the project`);
    else if (fragment && found !== "not markdown" && !found.anchors.has(fragment))
      broken.push(`${where}: ${target} has no heading #${fragment}`);
  }
  return broken;
}

/** Each file read and parsed once, however many links name it. */
function reader(source: (path: string) => string | undefined) {
  const seen = new Map<string, Markdown | "not markdown" | undefined>();
  return (path: string) => {
    if (!seen.has(path)) {
      const text = source(path);
      seen.set(path, text === undefined ? undefined : path.endsWith(".md") ? readMarkdown(text) : "not markdown");
    }
    return seen.get(path);
  };
}

const fromDisk = reader((path) => {
  const full = join(ROOT, path);
  if (!existsSync(full)) return undefined;
  return full.endsWith(".md") ? readFileSync(full, "utf8") : "";
});

describe("the README and the guides", () => {
  it("link only to files the project holds, and to headings those files have", () => {
    expect(GUIDES).toContain("docs/contract.md");
    expect(GUIDES.flatMap((file) => brokenLinks(file, fromDisk))).toEqual([]);
  });

  it("name no document the project does not hold", () => {
    const mentions = GUIDES.flatMap((file) =>
      readFileSync(join(ROOT, file), "utf8")
        .split("\n")
        .flatMap((text, i) => (FOREIGN_DOCUMENT.test(text) ? [`${file}:${i + 1}: ${text}`] : [])),
    );
    expect(mentions).toEqual([]);
  });
});

describe("the link check", () => {
  const files: Record<string, string> = {
    "README.md": "# Title\n\n## Quick start\n",
    "docs/a.md": "# A\n\n## 5.1 POST /jobs\n\n## Twice\n\n## Twice\n",
  };
  const check = (markdown: string) =>
    brokenLinks(
      "docs/b.md",
      reader((path) => (path === "docs/b.md" ? markdown : files[path])),
    );

  it("finds a missing file, a missing heading and a path out of the project", () => {
    expect(check("[x](missing.md) [y](a.md#nowhere) [z](../../shared/api.md)")).toEqual([
      "docs/b.md:1 → missing.md: no such file in the project",
      "docs/b.md:1 → a.md#nowhere: docs/a.md has no heading #nowhere",
      "docs/b.md:1 → ../../shared/api.md: no such file in the project",
    ]);
  });

  it("takes GitHub's anchors, reference links and links to the same page, and skips code and other sites", () => {
    const markdown = [
      "# B",
      "[a](a.md#51-post-jobs) [b](a.md#twice-1) [c](../README.md#quick-start) [d][ref] [e](#b)",
      "`[not a link](nowhere.md)` [f](https://example.com/x.md) [g](mailto:a@b.example)",
      "",
      "[ref]: a.md#twice",
    ].join("\n");
    expect(check(markdown)).toEqual([]);
  });
});
