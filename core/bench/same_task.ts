/**
 * Whether a changed bundle still poses the task an experiment's candidates met: the same task
 * text, fixtures, cases, capture, profile and web. Only what grades may differ (the checker,
 * gold, calibration, the judge, `:fetched`, the title). Pure.
 */
import type { Bundle } from "../bundle/types.ts";
import { fillTask } from "../bundle/task.ts";
import { canonicalJson } from "./experiment.ts";

/** What the experiment recorded of the task its candidates met. */
export interface TaskAsRun {
  /** The filled task text. */
  task: string;
  /** The run's params (over the bundle's defaults). */
  params: Record<string, unknown>;
  /** The case ids that ran (null: a bundle without cases). */
  cases: string[] | null;
}

/** Paths of `a` and `b` (world path → text) that differ: added, removed or changed. */
function changedPaths(a: Record<string, string>, b: Record<string, string>): string[] {
  const paths = new Set([...Object.keys(a), ...Object.keys(b)]);
  return [...paths].filter((p) => a[p] !== b[p]).sort();
}

function fewPaths(prefix: string, paths: string[]): string {
  const shown = paths.slice(0, 3).map((p) => `${prefix}${p}`).join(", ");
  return paths.length > 3 ? `${shown} and ${paths.length - 3} more` : shown;
}

/**
 * What differs between the task `original` posed (as `ran` records it) and the one `changed`
 * poses, one phrase each naming the file or field; empty when only grading differs.
 */
export function taskDifferences(original: Bundle, changed: Bundle, ran: TaskAsRun): string[] {
  const out: string[] = [];
  const o = original.definition;
  const c = changed.definition;
  const task = fillTask(c.task, { ...c.params, ...ran.params });
  if (task !== ran.task) out.push("the task text (workflow.edn :task with its :params)");
  const fields: [string, unknown, unknown][] = [
    [":profile", o.profile, c.profile],
    [":capture", o.capture, c.capture],
    [":web", o.web ?? null, c.web ?? null],
    [":allowed-sources", o.allowedSources ?? null, c.allowedSources ?? null],
    [":blocked-sources", o.blockedSources ?? null, c.blockedSources ?? null],
  ];
  for (const [name, a, b] of fields) {
    if (canonicalJson(a) !== canonicalJson(b)) out.push(`workflow.edn ${name}`);
  }
  if (canonicalJson(original.web) !== canonicalJson(changed.web)) out.push("web.edn (its pages)");
  const shared = changedPaths(original.fixtures, changed.fixtures);
  if (shared.length > 0) out.push(`the fixtures (${fewPaths("fixtures", shared)})`);
  for (const id of ran.cases ?? []) {
    const a = original.cases.find((k) => k.id === id);
    const b = changed.cases.find((k) => k.id === id);
    if (b === undefined) {
      out.push(`case "${id}" (cases/${id}/ is gone)`);
      continue;
    }
    const paths = changedPaths(a?.fixtures ?? {}, b.fixtures);
    if (paths.length > 0) {
      out.push(`case "${id}"'s fixtures (${fewPaths(`cases/${id}/fixtures`, paths)})`);
    }
  }
  if (ran.cases === null && changed.cases.length > 0) out.push("cases/ (the bundle has cases now)");
  return out;
}
