// Comment bodies as the API stores them (XHTML with a single <div> root,
// at most 256 KiB) and as the studio shows and edits them: plain text with
// line breaks. Writing escapes the text and turns each line break into
// <br/>; reading drops the markup (another client may have written
// richer XHTML) and keeps the text and its line breaks.

/** maxBodyBytes is the API's cap on a comment body (UTF-8 bytes, docs/security.md). */
export const maxBodyBytes = 256 * 1024;

const escapes: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };

/** toBody is the XHTML body of a plain text comment. */
export function toBody(text: string): string {
  const lines = text.trim().split(/\r\n|\r|\n/).map((l) => l.replace(/[&<>"']/g, (c) => escapes[c]!));
  return `<div>${lines.join("<br/>")}</div>`;
}

/** bodyBytes is the size of text's body in UTF-8 bytes (what the API's cap counts). */
export function bodyBytes(text: string): number {
  return new TextEncoder().encode(toBody(text)).length;
}

const named: Record<string, string> = { amp: "&", lt: "<", gt: ">", quot: '"', apos: "'", nbsp: "\u00a0" };

/** fromBody is the plain text of an XHTML body: line breaks and block ends as newlines, other markup dropped, entities decoded. */
export function fromBody(xhtml: string | undefined): string {
  if (!xhtml) return "";
  const inner = xhtml.trim().replace(/^<div\b[^>]*>/i, "").replace(/<\/div>$/i, "");
  const text = inner
    .replace(/<br\b[^>]*\/?>/gi, "\n")
    .replace(/<\/(p|div|li|h[1-6])>/gi, "\n")
    .replace(/<[^>]*>/g, "")
    .replace(/&(#x[0-9a-f]+|#\d+|\w+);/gi, (all, e: string) => {
      if (e[0] === "#") {
        const n = e[1] === "x" || e[1] === "X" ? parseInt(e.slice(2), 16) : parseInt(e.slice(1), 10);
        return Number.isFinite(n) && n >= 0 && n <= 0x10ffff ? String.fromCodePoint(n) : all;
      }
      return named[e.toLowerCase()] ?? all;
    });
  return text.replace(/\n+$/, "");
}

/** edited reports whether a comment was changed after it was written (a second or more later). */
export function edited(c: { created?: string | undefined; modified?: string | undefined }): boolean {
  if (!c.created || !c.modified) return false;
  return Date.parse(c.modified) - Date.parse(c.created) >= 1000;
}
