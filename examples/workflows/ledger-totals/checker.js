// Grades /out/answer.edn against the world's gold {expected: {rows, total}}.
export function check({ files, gold }) {
  const text = files["/out/answer.edn"];
  let answer = null;
  try {
    answer = text === undefined ? null : edn.parse(text);
  } catch (_) {
    answer = null;
  }
  const ok = answer !== null && typeof answer === "object" && !Array.isArray(answer);
  const { rows, total } = gold.expected;
  const checks = {
    answered: ok,
    rows: ok && answer.rows === rows,
    total: ok && typeof answer.total === "number" &&
      Math.round(answer.total * 100) === Math.round(total * 100),
  };
  const reward = (Number(checks.rows) + 2 * Number(checks.total)) / 3;
  return { checks, reward };
}
