import assert from "node:assert/strict";
import { pageText, pageTitle } from "../../../core/web/text.ts";

/** docs/compatibility.md §9.1 as regular expressions: the oracle (quadratic on hostile pages). */
function oracleText(html: string): string {
  return html
    .replace(/<(script|style|noscript)\b[^>]*>[\s\S]*?<\/\1\s*>/gi, "")
    .replace(/<[^>]*>/g, " ")
    .replace(/&nbsp;|&#160;/g, " ")
    .replace(/&amp;/g, "&")
    .replace(/\s+/g, " ")
    .trim();
}

function oracleTitle(html: string): string | null {
  const m = /<title\b[^>]*>([\s\S]*?)<\/title\s*>/i.exec(html);
  if (!m) return null;
  const t = oracleText(m[1]);
  return t === "" ? null : t;
}

const PIECES = [
  "<",
  ">",
  "<script>",
  "<script a='1'>",
  "</script>",
  "</SCRIPT >",
  "<scripts>",
  "<style>",
  "</style\n>",
  "<noscript>",
  "</noscript>",
  "<p>",
  "</p>",
  "<title>",
  "</title>",
  "<TITLE x>",
  "text",
  " ",
  "\n",
  "&amp;",
  "&nbsp;",
  "&#160;",
  "&lt;",
  "İ",
  "ſcript",
  "a>b",
  '<a title="<script>">',
];

function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 4294967296;
  };
}

Deno.test("pageText() and pageTitle() give what docs/compatibility.md §9.1's regular expressions give (2,000 random pages)", () => {
  const r = rng(7);
  for (let n = 0; n < 2000; n++) {
    const len = Math.floor(r() * 14);
    const html = Array.from({ length: len }, () => PIECES[Math.floor(r() * PIECES.length)]).join(
      "",
    );
    assert.equal(pageText(html), oracleText(html), JSON.stringify(html));
    assert.equal(pageTitle(html), oracleTitle(html), JSON.stringify(html));
  }
});

Deno.test("pageText() stays linear on hostile pages (unclosed <script and <, by the hundred thousand)", () => {
  const t0 = performance.now();
  assert.equal(pageText("<script".repeat(200_000)).length, 7 * 200_000);
  assert.equal(pageText("<".repeat(1_000_000)).length, 1_000_000);
  // No `</script>` ever closes: the opening tag is a tag, the rest text.
  assert.ok(pageText("<script>" + "</script x".repeat(100_000)).startsWith("</script x</script"));
  assert.equal(pageTitle("<title>".repeat(200_000)), null);
  // The regular expressions need hours for these; the scan needs well under a second.
  assert.ok(performance.now() - t0 < 20_000);
});
