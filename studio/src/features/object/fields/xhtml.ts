// XHTML values (XmlRef.SimpleHtml): the API's rules, mirrored. Management
// keeps a value that is well-formed XML with one <div> root (pkg/content
// divRoot); Rendering's xhtml function shows it through bluemonday's UGC
// policy (pkg/templates xhtmlPolicy). sanitize applies that policy's
// allow-list (elements, attributes and their patterns, URL rules,
// rel="nofollow") to a parsed tree, and toXHTML writes the <div> root, so
// what the editor stores is what the API keeps and renders.
// testdata/sanitize.json holds bluemonday's own answers to the samples of
// pkg/templates' TestStudioSanitizerFixture; xhtml.test.ts compares.

/** HNode is a parsed HTML node: text, or an element with attributes in order. */
export type HNode = string | { t: string; a: [string, string][]; c: HNode[] };

// The patterns of bluemonday's helpers.go. Go's \s is [\t\n\f\r ]; Go's
// MatchString is unanchored unless the pattern says ^ and $.
const S = "\\t\\n\\f\\r ";
const paragraph = new RegExp(`^[\\p{L}\\p{N}${S}\\-_',\\[\\]!\\./\\\\\\(\\)]*$`, "u");
const direction = /^(rtl|ltr)$/i;
const integer = /^[0-9]+$/;
const iso8601 = /^[0-9]{4}(-[0-9]{2}(-[0-9]{2}([ T][0-9]{2}(:[0-9]{2}){1,2}(.[0-9]{1,6})?Z?([+-][0-9]{2}:[0-9]{2})?)?)?)?$/u;
const listType = /^(circle|disc|square|a|A|i|I|1)$/i;
const spaceTokens = new RegExp(`^([${S}\\p{L}\\p{N}_-]+)$`, "u");
const number = /^[-+]?[0-9]*\.?[0-9]+([eE][-+]?[0-9]+)?$/;
const numberOrPercent = /^[0-9]+[%]?$/;
const cellAlign = /^(center|justify|left|right|char)$/i;
const cellVAlign = /^(baseline|bottom|middle|top)$/i;
const imageAlign = /^(left|right|top|texttop|middle|absmiddle|baseline|bottom|absbottom)$/i;

/** An attribute's rule: any value (true) or values matching the pattern. */
type Rule = true | RegExp;

/** Global attributes (AllowStandardAttributes). */
const globalAttrs: Record<string, Rule> = {
  dir: direction,
  lang: /[a-zA-Z]{2,20}/,
  id: /[a-zA-Z0-9:\-_.]+/,
  title: paragraph,
};

const E = (names: string, attrs: Record<string, Rule> = {}) => names.split(" ").map((n) => [n, attrs] as const);

/** The elements UGCPolicy allows and their own attributes. */
const elements = new Map<string, Record<string, Rule>>([
  ...E("article aside figure section summary hgroup h1 h2 h3 h4 h5 h6 br div hr p span wbr"),
  ...E("abbr acronym cite code dfn em figcaption mark s samp strong sub sup var b i pre small strike tt u rp rt ruby dl dt dd caption"),
  ...E("details", { open: /^(|open)$/i }),
  ...E("blockquote q", { cite: true }),
  ...E("a", { href: true }),
  ...E("map", { name: /^([\p{L}\p{N}_-]+)$/u }),
  ...E("area", { alt: paragraph, coords: /^([0-9]+,)+[0-9]+$/, href: true, rel: spaceTokens, shape: /^(default|circle|rect|poly)$/i }),
  ...E("time", { datetime: iso8601 }),
  ...E("bdi bdo", { dir: direction }),
  ...E("del ins", { cite: paragraph, datetime: iso8601 }),
  ...E("ol ul", { type: listType }),
  ...E("li", { type: listType, value: integer }),
  ...E("table", { height: numberOrPercent, width: numberOrPercent, summary: paragraph }),
  ...E("col colgroup", { align: cellAlign, height: numberOrPercent, width: numberOrPercent, span: integer, valign: cellVAlign }),
  ...E("thead tbody tfoot tr", { align: cellAlign, valign: cellVAlign }),
  ...E("td th", {
    abbr: paragraph, align: cellAlign, valign: cellVAlign, colspan: integer, rowspan: integer, headers: spaceTokens,
    height: numberOrPercent, width: numberOrPercent, scope: /(?:row|col)(?:group)?/i, nowrap: true,
  }),
  ...E("meter", { value: number, min: number, max: number, low: number, high: number, optimum: number }),
  ...E("progress", { value: number, max: number }),
  ...E("img", { usemap: /^#[\p{L}\p{N}_-]+$/iu, align: imageAlign, alt: paragraph, height: numberOrPercent, width: numberOrPercent, src: true }),
]);

/**
 * Elements kept without attributes (bluemonday's fixed set, whatever the
 * policy); an allowed element outside it loses its tags (not its content)
 * when no attribute is left, like <a> without a valid href.
 */
const withoutAttrs = new Set(
  ("abbr acronym address article aside audio b bdi blockquote body br button canvas caption center cite code col colgroup " +
    "datalist dd del details dfn div dl dt em fieldset figcaption figure footer h1 h2 h3 h4 h5 h6 head header hgroup hr html i " +
    "ins kbd li mark marquee nav ol optgroup option p picture pre q rp rt ruby s samp script section select small span strike " +
    "strong style sub summary sup svg table tbody td textarea tfoot th thead title time tr tt u ul var video wbr").split(" "),
);

/** Elements dropped with their content. */
const skipContent = new Set("frame frameset iframe noembed noframes noscript nostyle object script style title".split(" "));

/** URL attributes per element (bluemonday's linkable). */
const urlAttrs: Record<string, string> = { a: "href", area: "href", blockquote: "cite", del: "cite", ins: "cite", q: "cite", img: "src" };

/** The characters a URL may hold for Go's url.Parse and String to give it back unchanged. */
const urlChars = /^[A-Za-z0-9\-._~:/?#[\]@!$&'()*+,;=%]*$/;

/**
 * validURL is bluemonday's AllowStandardURLs: trimmed, no blanks, parseable,
 * relative or http, https, mailto. It returns the URL kept, or null. It is
 * stricter than Go's url.Parse in one way: a URL that Go would rewrite
 * (non-ASCII, characters it escapes) is refused rather than rewritten, so
 * what is stored is what renders.
 */
export function validURL(raw: string): string | null {
  const u = raw.replace(/^[\t\n\v\f\r \u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]+|[\t\n\v\f\r \u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]+$/g, "");
  if (u === "" || !urlChars.test(u) || /%(?![0-9A-Fa-f]{2})/.test(u)) return null;
  const m = /^([A-Za-z][A-Za-z0-9+.-]*):/.exec(u);
  if (m) {
    const scheme = (m[1] ?? "").toLowerCase();
    if (scheme !== "http" && scheme !== "https" && scheme !== "mailto") return null;
    const rest = u.slice(m[0].length);
    if (rest.startsWith("//") && !validAuthority(rest.slice(2))) return null;
    return scheme + ":" + rest;
  }
  // Relative: Go refuses a colon in the first path segment ("a:b").
  const first = u.split(/[/?#]/, 1)[0] ?? "";
  if (first.includes(":")) return null;
  if (u.startsWith("//") && !validAuthority(u.slice(2))) return null;
  return u;
}

/** validAuthority: Go's parseHost refuses a bad port, a stray bracket or a "%" outside an IPv6 zone. */
function validAuthority(rest: string): boolean {
  const auth = rest.split(/[/?#]/, 1)[0] ?? "";
  const at = auth.lastIndexOf("@");
  if (at >= 0) return false; // Go re-escapes user info; keep it out
  const host = auth;
  if (host.includes("%")) return false;
  if (host.startsWith("[")) return /^\[[0-9A-Fa-f:.]+\](:[0-9]*)?$/.test(host);
  if (/[[\]]/.test(host)) return false;
  const colon = host.indexOf(":");
  return colon < 0 || /^:[0-9]*$/.test(host.slice(colon));
}

function allowedAttrs(tag: string, attrs: [string, string][], own: Record<string, Rule>): [string, string][] {
  const out: [string, string][] = [];
  for (const [k, v] of attrs) {
    const rule = Object.prototype.hasOwnProperty.call(own, k) ? own[k] : undefined;
    const g = Object.prototype.hasOwnProperty.call(globalAttrs, k) ? globalAttrs[k] : undefined;
    if ((rule && (rule === true || rule.test(v))) || (g && (g === true || g.test(v)))) out.push([k, v]);
  }
  if (out.length === 0) return out;
  const urlAttr = urlAttrs[tag];
  const kept: [string, string][] = [];
  for (const [k, v] of out) {
    if (k !== urlAttr) {
      kept.push([k, v]);
      continue;
    }
    const u = validURL(v);
    if (u !== null) kept.push([k, u]);
  }
  if ((tag === "a" || tag === "area") && kept.some(([k]) => k === "href")) {
    const rel = kept.find(([k]) => k === "rel");
    if (rel) {
      if (!rel[1].includes("nofollow")) rel[1] += " nofollow";
    } else kept.push(["rel", "nofollow"]);
  }
  return kept;
}

/** sanitize applies the UGC policy to nodes: what bluemonday would keep of them. */
export function sanitize(nodes: readonly HNode[]): HNode[] {
  const out: HNode[] = [];
  for (const n of nodes) {
    if (typeof n === "string") {
      pushText(out, n);
      continue;
    }
    if (n.t.startsWith("#") || skipContent.has(n.t)) continue; // comments, scripts, …
    const own = elements.get(n.t);
    const children = sanitize(n.c);
    if (!own) {
      for (const c of children) typeof c === "string" ? pushText(out, c) : out.push(c);
      continue;
    }
    const a = n.a.length ? allowedAttrs(n.t, n.a, own) : [];
    if (a.length === 0 && !withoutAttrs.has(n.t)) {
      for (const c of children) typeof c === "string" ? pushText(out, c) : out.push(c);
      continue;
    }
    out.push({ t: n.t, a, c: children });
  }
  return out;
}

function pushText(out: HNode[], s: string) {
  if (s === "") return;
  const last = out[out.length - 1];
  if (typeof last === "string") out[out.length - 1] = last + s;
  else out.push(s);
}

/** normalize merges adjacent texts and drops empty ones (two parses of one markup compare equal). */
export function normalize(nodes: readonly HNode[]): HNode[] {
  const out: HNode[] = [];
  for (const n of nodes) {
    if (typeof n === "string") pushText(out, n);
    else out.push({ t: n.t, a: [...n.a].sort((x, y) => (x[0] < y[0] ? -1 : x[0] > y[0] ? 1 : 0)), c: normalize(n.c) });
  }
  return out;
}

const voids = new Set(["area", "br", "col", "hr", "img", "wbr"]);

function esc(s: string, attr: boolean): string {
  let r = s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
  if (attr) r = r.replace(/"/g, "&quot;");
  // XML 1.0 refuses most control characters even as references.
  return r.replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f\ufffe\uffff]/g, "");
}

function write(nodes: readonly HNode[], out: string[]) {
  for (const n of nodes) {
    if (typeof n === "string") {
      out.push(esc(n, false));
      continue;
    }
    out.push("<", n.t);
    for (const [k, v] of n.a) out.push(" ", k, '="', esc(v, true), '"');
    if (voids.has(n.t)) {
      out.push("/>");
      continue;
    }
    out.push(">");
    write(n.c, out);
    out.push("</", n.t, ">");
  }
}

/**
 * toXHTML writes the sanitized nodes inside the <div> root the API asks
 * for; undefined when nothing but blanks is left (the value is unset).
 */
export function toXHTML(nodes: readonly HNode[]): string | undefined {
  let clean = sanitize(nodes);
  // A lone <div> root of the input is the root itself.
  const only = clean.length === 1 ? clean[0] : undefined;
  if (only && typeof only !== "string" && only.t === "div" && only.a.length === 0) clean = only.c;
  if (isBlank(clean)) return undefined;
  const out: string[] = ["<div>"];
  write(clean, out);
  out.push("</div>");
  return out.join("");
}

function isBlank(nodes: readonly HNode[]): boolean {
  return nodes.every((n) => (typeof n === "string" ? n.trim() === "" : !voids.has(n.t) && n.t !== "hr" && isBlank(n.c)));
}

/** fromDOM reads a DOM subtree (a browser's HTML parse) as nodes. */
export function fromDOM(parent: Node): HNode[] {
  const out: HNode[] = [];
  parent.childNodes.forEach((c) => {
    if (c.nodeType === 3) out.push(c.nodeValue ?? "");
    else if (c.nodeType === 1) {
      const el = c as Element;
      const a: [string, string][] = [];
      for (const at of Array.from(el.attributes)) a.push([at.name, at.value]);
      const content = el.localName === "template" ? (el as HTMLTemplateElement).content : el;
      out.push({ t: el.localName, a, c: fromDOM(content) });
    } else if (c.nodeType === 8) out.push({ t: "#comment", a: [], c: [] });
  });
  return out;
}

/** toDOM builds DOM nodes of doc from (sanitized) nodes; no markup is parsed. */
export function toDOM(doc: Document, nodes: readonly HNode[], into: Node) {
  for (const n of nodes) {
    if (typeof n === "string") into.appendChild(doc.createTextNode(n));
    else {
      const el = doc.createElement(n.t);
      for (const [k, v] of n.a) el.setAttribute(k, v);
      toDOM(doc, n.c, el);
      into.appendChild(el);
    }
  }
}

/** parseStored reads a stored value (XHTML, or HTML from elsewhere) with the browser's HTML parser, sanitized. */
export function parseStored(value: unknown): HNode[] {
  if (typeof value !== "string" || value.trim() === "") return [];
  const doc = new DOMParser().parseFromString(`<body>${value}</body>`, "text/html");
  const nodes = sanitize(fromDOM(doc.body));
  const only = nodes.length === 1 ? nodes[0] : undefined;
  return only && typeof only !== "string" && only.t === "div" && only.a.length === 0 ? only.c : nodes;
}
