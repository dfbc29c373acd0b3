/**
 * Pages as text (REFERENCE §9.1): remove `<script|style|noscript …>…</…>` blocks, replace
 * every tag with a space, `&nbsp;`/`&#160;` → space, `&amp;` → `&` (no other entities),
 * collapse whitespace, trim. The title is the text of `<title>`, if any.
 */

const BLOCKS = /<(script|style|noscript)\b[^>]*>[\s\S]*?<\/\1\s*>/gi;
const TAG = /<[^>]*>/g;

/** A page's text as the checker and the frozen web see it. */
export function pageText(html: string): string {
  return html
    .replace(BLOCKS, "")
    .replace(TAG, " ")
    .replace(/&nbsp;|&#160;/g, " ")
    .replace(/&amp;/g, "&")
    .replace(/\s+/g, " ")
    .trim();
}

/** The text of a page's `<title>`, or null when it has none (or an empty one). */
export function pageTitle(html: string): string | null {
  const m = /<title\b[^>]*>([\s\S]*?)<\/title\s*>/i.exec(html);
  if (!m) return null;
  const t = pageText(m[1]);
  return t === "" ? null : t;
}
