/**
 * Reading the project's markdown the way GitHub renders it: its links (inline, reference and
 * images, never those inside code) and the anchors its headings get.
 */
import GithubSlugger from "github-slugger";
import { fromMarkdown } from "mdast-util-from-markdown";
import { gfmFromMarkdown } from "mdast-util-gfm";
import { gfm } from "micromark-extension-gfm";

function parse(markdown: string) {
  return fromMarkdown(markdown, { extensions: [gfm()], mdastExtensions: [gfmFromMarkdown()] });
}

type Root = ReturnType<typeof fromMarkdown>;
type Nodes = Root | Root["children"][number];

function* walk(node: Nodes): Generator<Nodes> {
  yield node;
  if ("children" in node) for (const child of node.children) yield* walk(child);
}

function textOf(node: Nodes): string {
  if ("value" in node && node.type !== "html") return node.value;
  return "children" in node ? node.children.map(textOf).join("") : "";
}

interface Link {
  url: string;
  line: number;
}

export interface Markdown {
  links: Link[];
  /** The `#fragment` each heading gets on GitHub, repeats numbered as GitHub numbers them. */
  anchors: Set<string>;
}

export function readMarkdown(markdown: string): Markdown {
  const links: Link[] = [];
  const anchors = new Set<string>();
  const slugger = new GithubSlugger();
  for (const node of walk(parse(markdown))) {
    if (node.type === "link" || node.type === "image" || node.type === "definition")
      links.push({ url: node.url, line: node.position?.start.line ?? 0 });
    else if (node.type === "heading") anchors.add(slugger.slug(textOf(node)));
  }
  return { links, anchors };
}

/** A link to another site or scheme, which this check does not follow. */
export const isExternal = (url: string) => /^[a-z][a-z0-9+.-]*:/i.test(url) || url.startsWith("//");
