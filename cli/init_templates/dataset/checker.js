// Grades /out/answer.edn against the case's gold.edn. check(input) gets the captured files
// (input.files, by absolute world path), the case's gold, the params, and returns
// {checks: {name: boolean}, reward: 0..1}. It runs in a sandbox: no files, network or
// imports; edn.parse reads EDN text as plain JSON values (keywords lose their colon).

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

function same(a, b) {
  return typeof a === "string" && a.trim().toLowerCase() === String(b).toLowerCase();
}

export function check({ files, gold }) {
  const answer = readAnswer(files);
  if (answer === null) {
    return {
      checks: { "wrote-answer": false, "customer": false, "order": false, "refund": false },
      reward: 0,
    };
  }
  const checks = {
    "wrote-answer": true,
    "customer": same(answer.customer, gold.customer),
    "order": same(answer.order, gold.order),
    // Money within a cent.
    "refund": typeof answer.refund === "number" && Math.abs(answer.refund - gold.refund) < 0.005,
  };
  const reward = 0.25 * Number(checks.customer) + 0.25 * Number(checks.order) +
    0.5 * Number(checks.refund);
  return { checks, reward };
}
