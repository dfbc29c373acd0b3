// Grades /out/rivals.edn: a vector of {:name :url :quote} maps naming rivals of the product.
// A find counts as grounded only if its quote is on the page at :url as the attempt fetched
// it (input.fetched, recorded by the host); a judge model says whether each find is a rival.
// A find naming a rival an earlier find already named counts as neither.

function norm(s) {
  return typeof s === "string"
    ? s.toLowerCase().replace(/<[^>]*>/g, " ").replace(/&[a-z#0-9]+;/g, " ")
      .replace(/[^\p{L}\p{N}]+/gu, " ").trim()
    : "";
}

function hostOf(url) {
  const m = /^https?:\/\/([^/?#:]+)/i.exec(typeof url === "string" ? url : "");
  return m ? m[1].toLowerCase().replace(/^www\./, "") : "";
}

function readFinds(files) {
  const text = files["/out/rivals.edn"];
  if (typeof text !== "string") return null;
  try {
    const v = edn.parse(text);
    return Array.isArray(v) ? v.filter((f) => f && typeof f === "object") : null;
  } catch {
    return null;
  }
}

function others(finds, params) {
  return finds.filter((f) => norm(f.name) !== norm(params.product));
}

// Whether each find is the first to name its rival (a repeated one is no new find).
function firstOfName(list) {
  const seen = new Set();
  return list.map((f) => {
    const name = norm(f.name);
    const first = !seen.has(name);
    seen.add(name);
    return first;
  });
}

function pageOf(fetched, url) {
  if (typeof url !== "string") return null;
  return fetched[url] ?? fetched[url.replace(/\/$/, "")] ?? fetched[url + "/"] ?? null;
}

export function judgeRequests({ files, fetched, params }) {
  const finds = readFinds(files);
  if (finds === null) return [];
  return others(finds, params).map((f) => ({
    id: norm(f.name),
    prompt: `Is "${f.name}" (${f.url}) a product that competes with ${params.product}, ` +
      `a maker of hand tools for carpenters? Its page says: ` +
      `${(pageOf(fetched, f.url) ?? "(not fetched)").slice(0, 1500)}\n` +
      `Answer "Yes" or "No", then one short reason.`,
  }));
}

export function check({ files, fetched, judgements, params, gold }) {
  const finds = readFinds(files);
  if (finds === null) {
    return {
      checks: {
        "wrote-list?": false,
        "complete-entries?": false,
        "found-reference?": false,
        "every-quote-fetched?": false,
        "all-relevant?": false,
      },
      reward: 0,
    };
  }
  const list = others(finds, params);
  const complete = list.every((f) =>
    typeof f.name === "string" && typeof f.url === "string" && typeof f.quote === "string"
  );
  const found = gold.reference.filter((r) =>
    list.some((f) => norm(f.name) === norm(r.name) || r.hosts.includes(hostOf(f.url)))
  );
  const first = firstOfName(list);
  const grounded = list.filter((f, i) => {
    if (!first[i]) return false;
    const q = norm(f.quote);
    const page = pageOf(fetched, f.url);
    return q.length >= 20 && page !== null && norm(page).includes(q);
  });
  const relevant = list.filter((f, i) =>
    first[i] && /^yes\b/i.test(judgements[norm(f.name)] ?? "")
  );
  const share = (n) => (list.length === 0 ? 0 : n / list.length);
  return {
    checks: {
      "wrote-list?": list.length > 0,
      "complete-entries?": complete,
      "found-reference?": found.length === gold.reference.length,
      "every-quote-fetched?": list.length > 0 && grounded.length === list.length,
      "all-relevant?": list.length > 0 && relevant.length === list.length,
    },
    reward: 0.4 * (found.length / gold.reference.length) + 0.3 * share(grounded.length) +
      0.3 * share(relevant.length),
  };
}
