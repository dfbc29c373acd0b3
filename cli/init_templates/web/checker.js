// Grades /out/answer.edn: the Saturday opening time, and a quote that is on the page the
// answer names, as the attempt fetched it (input.fetched maps each URL the attempt read to
// the page's text; the host records it because workflow.edn says :fetched true).

function readAnswer(files) {
  const text = files["/out/answer.edn"];
  if (typeof text !== "string") return null;
  try {
    const value = edn.parse(text);
    return value && typeof value === "object" && !Array.isArray(value) ? value : null;
  } catch {
    return null;
  }
}

function norm(s) {
  return typeof s === "string" ? s.toLowerCase().replace(/[^\p{L}\p{N}:]+/gu, " ").trim() : "";
}

function hostOf(url) {
  const m = /^https?:\/\/([^/?#:]+)/i.exec(typeof url === "string" ? url : "");
  return m ? m[1].toLowerCase() : "";
}

export function check({ files, fetched, gold }) {
  const answer = readAnswer(files);
  if (answer === null) {
    return {
      checks: {
        "wrote-answer": false,
        "time-right": false,
        "quote-fetched": false,
        "own-site": false,
      },
      reward: 0,
    };
  }
  const page = typeof answer.url === "string" ? fetched[answer.url] : undefined;
  const quote = norm(answer.quote);
  const checks = {
    "wrote-answer": true,
    "time-right": answer.opens === gold.opens,
    // At least a few words, and on the page the attempt really read.
    "quote-fetched": quote.length >= 15 && typeof page === "string" && norm(page).includes(quote),
    // The library's own site, not a forum's guess.
    "own-site": gold.hosts.includes(hostOf(answer.url)),
  };
  const reward = 0.5 * Number(checks["time-right"]) + 0.3 * Number(checks["quote-fetched"]) +
    0.2 * Number(checks["own-site"]);
  return { checks, reward };
}
