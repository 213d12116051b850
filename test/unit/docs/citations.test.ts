import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../../..");
/** These checks, whose examples cite what they look for. */
const THE_CHECKS = relative(ROOT, dirname(fileURLToPath(import.meta.url)));
const SOURCE_DIRS = ["worker", "encoder", "domain", "client", "cli", "dev", "test", "bench", "drizzle", "bin"];
/** Written by tools, not by us. */
const GENERATED = ["client/generated/", "drizzle/migrations/"];
const SOURCE = /\.(ts|tsx|mts|mjs|js|cjs|sh)$/;

const sourceFiles = () =>
  SOURCE_DIRS.flatMap((dir) =>
    readdirSync(join(ROOT, dir), { recursive: true, encoding: "utf8" })
      .map((name) => `${dir}/${name}`)
      .filter((path) => SOURCE.test(path) && !path.includes("node_modules/"))
      .filter((path) => !GENERATED.some((prefix) => path.startsWith(prefix)) && !path.startsWith(`${THE_CHECKS}/`)),
  );

/** The word for the contract's source text, spelt in two so that no grep for it finds this file. */
const SOURCE_TEXT = ["sp", "ec"].join("");
const CITES_SOURCE_TEXT = new RegExp(`\\b${SOURCE_TEXT}\\b`, "i");

/** A line citing a document the project does not hold: the contract's source text, `../shared`, a design doc. */
const FOREIGN = [
  {
    why: "cites the contract's source text, not docs/contract.md",
    test: (line: string) => CITES_SOURCE_TEXT.test(line) && !/openapi|specification/i.test(line),
  },
  { why: "points outside the project", test: (line: string) => /\.\.\/shared|\/work\/shared/.test(line) },
  {
    why: "cites a design document",
    test: (line: string) => /\(architecture\b|\bthe architecture\b|(?<!docs\/)architecture\.md/i.test(line),
  },
];

function foreignCitations(path: string, text: string): string[] {
  return text
    .split("\n")
    .flatMap((line, i) =>
      FOREIGN.filter((rule) => rule.test(line)).map((rule) => `${path}:${i + 1}: ${rule.why}: ${line.trim()}`),
    );
}

/** The guides a line names (`docs/<name>.md`) and the contract sections it cites (`§4.3`). */
function citationsIn(text: string) {
  return {
    guides: [...text.matchAll(/\bdocs\/([\w-]+)\.md\b/g)].map((m) => `docs/${m[1]}.md`),
    sections: [...text.matchAll(/§(\d+(?:\.\d+)*)/g)].map((m) => m[1]),
  };
}

/** The numbers of docs/contract.md's sections: `## 4. States and transitions` is 4, `### 4.1 States` is 4.1. */
function contractSections(markdown: string): Set<string> {
  return new Set([...markdown.matchAll(/^#{2,4} (\d+(?:\.\d+)*)\.? /gm)].map((m) => m[1]));
}

describe("code and tests cite only documents the project holds", () => {
  const files = sourceFiles().map((path) => ({ path, text: readFileSync(join(ROOT, path), "utf8") }));

  it("no file cites the contract's source text, ../shared or a design document", () => {
    expect(files.length).toBeGreaterThan(100);
    expect(files.flatMap(({ path, text }) => foreignCitations(path, text))).toEqual([]);
  });

  it("every docs/<name>.md cited exists, and every § cited is a section of docs/contract.md", () => {
    const sections = contractSections(readFileSync(join(ROOT, "docs/contract.md"), "utf8"));
    const missing = files.flatMap(({ path, text }) => {
      const { guides, sections: cited } = citationsIn(text);
      return [
        ...guides.filter((guide) => !existsSync(join(ROOT, guide))).map((guide) => `${path}: ${guide} does not exist`),
        ...cited.filter((n) => !sections.has(n)).map((n) => `${path}: docs/contract.md has no §${n}`),
      ];
    });
    expect(sections.has("4.3")).toBe(true);
    expect(missing).toEqual([]);
  });
});

describe("the citation check", () => {
  it("finds the contract's source text, ../shared and design documents, and leaves OpenAPI and specifications alone", () => {
    const text = [
      `/** Job states (${SOURCE_TEXT}, States and transitions). */`,
      `describe("${SOURCE_TEXT}: POST /jobs › 201", () => {`,
      `// see ../shared/${SOURCE_TEXT}/api-v1.md`,
      "/** The others are ours (architecture, decisions). */",
      `// the OpenAPI ${SOURCE_TEXT}'s components`,
      `const ${SOURCE_TEXT} = preset.specifications;`,
      "/** Job states (docs/contract.md §4). */",
      "// where each concern lives: docs/architecture.md",
    ].join("\n");
    expect(foreignCitations("x.ts", text).map((line) => line.split(":").slice(0, 3).join(":"))).toEqual([
      "x.ts:1: cites the contract's source text, not docs/contract.md",
      "x.ts:2: cites the contract's source text, not docs/contract.md",
      "x.ts:3: cites the contract's source text, not docs/contract.md",
      "x.ts:3: points outside the project",
      "x.ts:4: cites a design document",
    ]);
  });

  it("reads the guides and sections a text cites, and the sections the contract has", () => {
    expect(
      citationsIn('(docs/contract.md §4.3, rule 2) describe("contract §5.1 POST /jobs", see docs/webhooks.md'),
    ).toEqual({
      guides: ["docs/contract.md", "docs/webhooks.md"],
      sections: ["4.3", "5.1"],
    });
    expect([...contractSections("## 4. States\n### 4.1 States\n#### 4.1.2 More\n## Notes\n")]).toEqual([
      "4",
      "4.1",
      "4.1.2",
    ]);
  });
});
