// The rich-text editor's document model (ProseMirror schema): the part of
// the UGC allow-list (xhtml.ts) an editor writes with — paragraphs,
// headings, lists, quotes, line breaks, bold, italic, code and links. A
// stored value with more (a table, an image) is read through the
// sanitizer and then this schema, which keeps the text and drops the rest;
// the field says so before the first change is made.
import { Schema } from "prosemirror-model";
import { type HNode, validURL } from "./xhtml";

/** headingLevels are the headings the toolbar offers (h1 is the page's title). */
export const headingLevels = [2, 3, 4] as const;

export const schema = new Schema({
  nodes: {
    doc: { content: "block+" },
    paragraph: { group: "block", content: "inline*", parseDOM: [{ tag: "p" }], toDOM: () => ["p", 0] },
    heading: {
      group: "block",
      content: "inline*",
      defining: true,
      attrs: { level: { default: 2 } },
      parseDOM: [1, 2, 3, 4, 5, 6].map((level) => ({ tag: `h${level}`, attrs: { level } })),
      toDOM: (n) => [`h${n.attrs.level as number}`, 0],
    },
    blockquote: { group: "block", content: "block+", defining: true, parseDOM: [{ tag: "blockquote" }], toDOM: () => ["blockquote", 0] },
    bullet_list: { group: "block", content: "list_item+", parseDOM: [{ tag: "ul" }], toDOM: () => ["ul", 0] },
    ordered_list: { group: "block", content: "list_item+", parseDOM: [{ tag: "ol" }], toDOM: () => ["ol", 0] },
    list_item: { content: "paragraph block*", defining: true, parseDOM: [{ tag: "li" }], toDOM: () => ["li", 0] },
    text: { group: "inline" },
    hard_break: { group: "inline", inline: true, selectable: false, parseDOM: [{ tag: "br" }], toDOM: () => ["br"] },
  },
  marks: {
    link: {
      attrs: { href: {} },
      inclusive: false,
      parseDOM: [{ tag: "a[href]", getAttrs: (d) => {
        const href = validURL((d as HTMLElement).getAttribute("href") ?? "");
        return href === null ? false : { href };
      } }],
      toDOM: (m) => ["a", { href: m.attrs.href as string }, 0],
    },
    strong: { parseDOM: [{ tag: "strong" }, { tag: "b" }], toDOM: () => ["strong", 0] },
    em: { parseDOM: [{ tag: "em" }, { tag: "i" }], toDOM: () => ["em", 0] },
    code: { parseDOM: [{ tag: "code" }], toDOM: () => ["code", 0] },
  },
});

const tags = new Set("p h1 h2 h3 h4 h5 h6 blockquote ul ol li br a strong b em i code".split(" "));

/**
 * editable reports whether the editor shows all of the (sanitized) nodes:
 * only the schema's elements, links with nothing but href and rel. A value
 * with more (a table, an image, a title) loses that part when edited.
 */
export function editable(nodes: readonly HNode[]): boolean {
  return nodes.every((n) =>
    typeof n === "string" ||
    (tags.has(n.t) && n.a.every(([k]) => n.t === "a" && (k === "href" || k === "rel")) && editable(n.c)));
}
