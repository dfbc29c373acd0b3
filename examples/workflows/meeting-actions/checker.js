// Grades /out/actions.edn: finds each gold action by owner and task words, then
// checks the due dates and that no idea without an owner was turned into an action.

function lower(x) {
  return typeof x === "string" ? x.toLowerCase() : "";
}

function readActions(files) {
  const text = files["/out/actions.edn"];
  if (typeof text !== "string") return null;
  try {
    const v = edn.parse(text);
    return Array.isArray(v) ? v.filter((a) => a && typeof a === "object") : null;
  } catch {
    return null;
  }
}

export function check({ files, gold }) {
  const actions = readActions(files);
  if (actions === null) {
    return {
      checks: { "wrote-actions": false, "found-all": false, "dates-right": false, "nothing-invented": false },
      reward: 0,
    };
  }
  const matches = gold.actions.map((want) =>
    actions.find((a) =>
      lower(a.owner) === want.owner.toLowerCase() &&
      want.keys.some((k) => lower(a.task).includes(k))
    )
  );
  const found = matches.filter((m) => m !== undefined).length;
  const dated = matches.filter((m, i) => m !== undefined && m.due === gold.actions[i].due).length;
  const invented = actions.filter((a) =>
    gold["not-committed"].some((idea) => lower(a.task).includes(idea))
  ).length;
  const extra = actions.length - found;
  const checks = {
    "wrote-actions": actions.length > 0,
    "found-all": found === gold.actions.length,
    "dates-right": dated === gold.actions.length,
    "nothing-invented": invented === 0 && extra === 0,
  };
  const n = gold.actions.length;
  const reward = 0.5 * (found / n) + 0.3 * (dated / n) + (checks["nothing-invented"] ? 0.2 : 0);
  return { checks, reward };
}
