/**
 * Pages as text (docs/compatibility.md §9.1): remove `<script|style|noscript …>…</…>` blocks, replace
 * every tag with a space, `&nbsp;`/`&#160;` → space, `&amp;` → `&` (no other entities),
 * collapse whitespace, trim. The title is the text of `<title>`, if any.
 *
 * Pages come from anywhere a candidate points the host at, so the scan is linear in the
 * page's length: backtracking regular expressions (`<[^>]*>`, `<script…>[\s\S]*?</script>`)
 * take quadratic time on pages of unclosed `<` or `<script` (20,000 of them: 18 s).
 */

const BLOCK_TAGS = ["script", "style", "noscript"] as const;

function isWordChar(c: string | undefined): boolean {
  return c !== undefined && /[A-Za-z0-9_]/.test(c);
}

/**
 * ASCII letters lower-cased, nothing else: the same length as the text (toLowerCase() can
 * lengthen some characters, which would shift positions), and what a regex's `i` flag
 * folds for ASCII tag names.
 */
function asciiLower(text: string): string {
  return text.replace(/[A-Z]+/g, (m) => m.toLowerCase());
}

/** The first ">" at or after each position asked for, asked in increasing order. */
function gtFinder(text: string): (from: number) => number {
  let at = -2;
  return (from) => {
    if (at === -1) return -1;
    if (at < from) at = text.indexOf(">", from);
    return at;
  };
}

/** The end (past ">") of the first `</name\s*>` at or after `from` in `lower`, or -1. */
function closerEnd(lower: string, name: string, from: number): number {
  for (let c = lower.indexOf(`</${name}`, from); c !== -1; c = lower.indexOf(`</${name}`, c + 1)) {
    let k = c + 2 + name.length;
    while (k < lower.length && /\s/.test(lower[k])) k++;
    if (lower[k] === ">") return k + 1;
  }
  return -1;
}

/** `html` without its `<script|style|noscript …>…</…>` blocks, as the regex would leave it. */
function removeBlocks(html: string): string {
  const lower = asciiLower(html);
  const nextGt = gtFinder(html);
  const noCloser = new Set<string>();
  const out: string[] = [];
  let at = 0;
  for (let i = html.indexOf("<"); i !== -1; i = html.indexOf("<", i + 1)) {
    const name = BLOCK_TAGS.find((n) =>
      !noCloser.has(n) && lower.startsWith(n, i + 1) && !isWordChar(html[i + 1 + n.length])
    );
    if (name === undefined) continue;
    const gt = nextGt(i + 1);
    if (gt === -1) break; // no opening tag can end from here on
    const end = closerEnd(lower, name, gt + 1);
    if (end === -1) {
      noCloser.add(name); // none after this one either
      continue;
    }
    out.push(html.slice(at, i));
    at = end;
    i = end - 1;
  }
  out.push(html.slice(at));
  return out.join("");
}

/** Every `<…>` replaced by a space (an unclosed `<` stays text). */
function replaceTags(text: string): string {
  const nextGt = gtFinder(text);
  const out: string[] = [];
  let at = 0;
  for (let i = text.indexOf("<"); i !== -1; i = text.indexOf("<", at)) {
    const gt = nextGt(i + 1);
    if (gt === -1) break;
    out.push(text.slice(at, i), " ");
    at = gt + 1;
  }
  out.push(text.slice(at));
  return out.join("");
}

/** A page's text as the checker and the frozen web see it. */
export function pageText(html: string): string {
  return replaceTags(removeBlocks(html))
    .replace(/&nbsp;|&#160;/g, " ")
    .replace(/&amp;/g, "&")
    .replace(/\s+/g, " ")
    .trim();
}

/** The text of a page's `<title>`, or null when it has none (or an empty one). */
export function pageTitle(html: string): string | null {
  const lower = asciiLower(html);
  let from = 0;
  while (true) {
    const open = lower.indexOf("<title", from);
    if (open === -1) return null;
    if (isWordChar(html[open + 6])) {
      from = open + 1;
      continue;
    }
    const gt = html.indexOf(">", open);
    if (gt === -1) return null;
    let c = lower.indexOf("</title", gt + 1);
    while (c !== -1) {
      let k = c + 7;
      while (k < html.length && /\s/.test(html[k])) k++;
      if (html[k] === ">") break;
      c = lower.indexOf("</title", c + 1);
    }
    if (c === -1) return null;
    const t = pageText(html.slice(gt + 1, c));
    return t === "" ? null : t;
  }
}
