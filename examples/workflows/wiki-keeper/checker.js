// Grades a wiki against the documents beside it (no gold: the documents are the truth): a
// page per document with the right title and source line, a summary of at most max-lines
// lines, and an index that lists every page.

function docsAndPages(files) {
  const docs = {}, pages = {};
  for (const [path, text] of Object.entries(files)) {
    const d = /^\/docs\/([^/]+)\.md$/.exec(path);
    const p = /^\/wiki\/([^/]+)\.md$/.exec(path);
    if (d) docs[d[1]] = text;
    else if (p && p[1] !== "index") pages[p[1]] = text;
  }
  return { docs, pages };
}

function titleOf(text) {
  const first = text.split("\n")[0] ?? "";
  return first.startsWith("# ") ? first.slice(2).trim() : null;
}

export function check({ files, params }) {
  const { docs, pages } = docsAndPages(files);
  const names = Object.keys(docs).sort();
  const maxLines = typeof params["max-lines"] === "number" ? params["max-lines"] : 5;
  let paged = 0, titled = 0, sourced = 0, short = 0;
  for (const name of names) {
    const page = pages[name];
    if (typeof page !== "string") continue;
    paged++;
    const lines = page.replace(/\n+$/, "").split("\n");
    if (titleOf(page) !== null && titleOf(page) === titleOf(docs[name])) titled++;
    if (lines[1] === `Source: docs/${name}.md`) sourced++;
    if (lines.length - 2 <= maxLines) short++;
  }
  const index = files["/wiki/index.md"];
  const listed = typeof index === "string" && index.startsWith("# Index")
    ? names.filter((n) => index.includes(`- [${titleOf(docs[n])}](${n}.md)`)).length
    : 0;
  const orphans = Object.keys(pages).filter((p) => !(p in docs)).length;
  const n = Math.max(names.length, 1);
  const checks = {
    "every-document-paged": paged === names.length && names.length > 0,
    "titles-right": titled === names.length,
    "sources-named": sourced === names.length,
    "summaries-short": short === names.length,
    "index-complete": listed === names.length,
    "no-orphan-pages": orphans === 0,
  };
  const reward = (0.3 * paged + 0.2 * titled + 0.2 * sourced + 0.1 * short + 0.2 * listed) / n *
    (orphans === 0 ? 1 : 0.5);
  return { checks, reward: Math.round(reward * 1000) / 1000 };
}
