// Grades /out/answer.edn against the case's gold: one check per field.
// The answer may use string or keyword keys; amounts may be numbers or strings
// written the German ("1.234,56") or English ("1,234.56") way.

const FIELDS = ["vendor", "invoice-no", "date", "currency", "total"];

function norm(s) {
  return String(s).toLowerCase().replace(/[^a-z0-9]+/g, " ").trim();
}

function amount(x) {
  if (typeof x === "number") return x;
  if (typeof x !== "string") return null;
  let s = x.replace(/[\s€$']|EUR|USD|CHF/g, "");
  const comma = s.lastIndexOf(","), dot = s.lastIndexOf(".");
  if (comma > dot) s = s.replace(/\./g, "").replace(",", ".");
  else s = s.replace(/,/g, "");
  return /^-?\d+(\.\d+)?$/.test(s) ? Number(s) : null;
}

function readAnswer(files) {
  const text = files["/out/answer.edn"];
  if (typeof text !== "string") return null;
  try {
    const v = edn.parse(text);
    return v && typeof v === "object" && !Array.isArray(v) ? v : null;
  } catch {
    return null;
  }
}

export function check({ files, gold, params }) {
  const answer = readAnswer(files);
  const want = gold.expected;
  const tolerance = params["total-tolerance"] ?? 0.01;
  const checks = { "answer-present": answer !== null };
  const right = {
    vendor: (a) => norm(a).includes(norm(want.vendor)) && norm(a).length > 0,
    "invoice-no": (a) => norm(a) === norm(want["invoice-no"]),
    date: (a) => String(a).trim() === want.date,
    currency: (a) => String(a).trim().toUpperCase() === want.currency,
    total: (a) => amount(a) !== null && Math.abs(amount(a) - want.total) <= tolerance,
  };
  let score = 0;
  for (const f of FIELDS) {
    const ok = answer !== null && answer[f] !== undefined && answer[f] !== null && right[f](answer[f]);
    checks[f] = ok;
    if (ok) score += 1;
  }
  return { checks, reward: score / FIELDS.length };
}
