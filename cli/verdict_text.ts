import type { CheckerRun } from "../core/checker.ts";

/** One line for a checker run: reward and checks, or the fault. */
export function runLine(run: CheckerRun): string {
  if (!run.ok) return `FAULT (${run.fault}) ${run.message}`;
  const checks = Object.entries(run.verdict.checks);
  const passed = checks.filter(([, v]) => v).length;
  return `reward ${run.verdict.reward.toFixed(3)}  checks ${passed}/${checks.length}`;
}

/** The checks of a run, one per line, marked pass/FAIL. */
export function checkLines(run: CheckerRun, indent = "    "): string[] {
  if (!run.ok) return [];
  return Object.entries(run.verdict.checks).map(([k, v]) =>
    `${indent}${v ? "pass" : "FAIL"}  ${k}`
  );
}
