/**
 * JUnit XML, the format CI systems display, for calibrations (one test case per calibration
 * variant: the reference and each damaged one) and benchmarks (one test case per cell:
 * candidate × case × repetition). A passed attempt is a passing test; a failed, crashed,
 * timed-out or budget-stopped one a <failure>; a fault an <error>; a planned cell without a
 * record <skipped>. Pure: the same input gives the same text.
 */
import type { CalibrationResult } from "../calibrate/calibrate.ts";
import type { AutoCalibration } from "../calibrate/auto.ts";
import type { JudgeConsistency } from "../calibrate/judge_consistency.ts";
import type { AttemptRecord } from "./records.ts";
import { cellKey } from "./records.ts";
import { causeOf, OUTCOME_TEXT, outcomeOf } from "./outcome.ts";

/** Text with the five XML entities escaped and characters XML 1.0 cannot hold removed. */
export function escapeXml(text: string): string {
  return text
    // deno-lint-ignore no-control-regex
    .replace(/[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]/g, "")
    .replace(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g, "")
    .replaceAll("&", "&amp;").replaceAll("<", "&lt;").replaceAll(">", "&gt;")
    .replaceAll('"', "&quot;").replaceAll("'", "&apos;");
}

/** Seconds with three decimals, as JUnit's time attributes. */
function secs(ms: number): string {
  return (Math.max(0, ms) / 1000).toFixed(3);
}

interface Case {
  classname: string;
  name: string;
  ms: number;
  /** null: passed. */
  result:
    | null
    | { kind: "failure" | "error"; type: string; message: string; detail: string }
    | { kind: "skipped"; message: string };
}

function caseXml(c: Case): string {
  const head = `    <testcase classname="${escapeXml(c.classname)}" name="${escapeXml(c.name)}" ` +
    `time="${secs(c.ms)}"`;
  const r = c.result;
  if (r === null) return `${head}/>`;
  if (r.kind === "skipped") {
    return `${head}>\n      <skipped message="${escapeXml(r.message)}"/>\n    </testcase>`;
  }
  return `${head}>\n      <${r.kind} message="${escapeXml(r.message)}" type="${
    escapeXml(r.type)
  }">${escapeXml(r.detail)}</${r.kind}>\n    </testcase>`;
}

function suiteXml(name: string, cases: Case[]): string {
  const count = (k: string) => cases.filter((c) => c.result?.kind === k).length;
  const ms = cases.reduce((a, c) => a + c.ms, 0);
  return `  <testsuite name="${escapeXml(name)}" tests="${cases.length}" failures="${
    count("failure")
  }" errors="${count("error")}" skipped="${count("skipped")}" time="${secs(ms)}">\n` +
    cases.map(caseXml).join("\n") + (cases.length > 0 ? "\n" : "") + "  </testsuite>";
}

function document(name: string, suites: { name: string; cases: Case[] }[]): string {
  const all = suites.flatMap((s) => s.cases);
  const count = (k: string) => all.filter((c) => c.result?.kind === k).length;
  const ms = all.reduce((a, c) => a + c.ms, 0);
  // No `skipped` here: Jenkins' junit-10.xsd allows it on <testsuite> only.
  return `<?xml version="1.0" encoding="UTF-8"?>\n<testsuites name="${
    escapeXml(name)
  }" tests="${all.length}" failures="${count("failure")}" errors="${count("error")}" time="${
    secs(ms)
  }">\n` + suites.map((s) => suiteXml(s.name, s.cases)).join("\n") +
    "\n</testsuites>\n";
}

/**
 * A calibration as JUnit XML: suite "calibrate <bundle>", one test case for the reference
 * (fails when it fails a check) and one per damaged variant (fails when it keeps a check it
 * should lose or does not score below the reference); a checker fault is an error. With
 * automatic mutations, one per mutation and one for the margin; with a judge consistency
 * measured, one for it.
 */
export function calibrationJunit(
  bundleName: string,
  result: CalibrationResult,
  judge?: JudgeConsistency,
): string {
  const classname = `${bundleName}.calibration`;
  const cases: Case[] = [];
  const problemsOf = (prefix: string) => result.problems.filter((p) => p.startsWith(prefix));
  const ref = result.reference;
  if (ref === null) {
    cases.push({
      classname,
      name: "reference",
      ms: 0,
      result: {
        kind: "failure",
        type: "not-calibrated",
        message: result.problems[0] ?? "no reference answer",
        detail: result.problems.join("\n"),
      },
    });
  } else if (!ref.ok) {
    cases.push({
      classname,
      name: "reference",
      ms: ref.ms,
      result: { kind: "error", type: ref.fault, message: ref.message, detail: ref.message },
    });
  } else {
    const failed = problemsOf("the reference");
    cases.push({
      classname,
      name: "reference",
      ms: ref.ms,
      result: failed.length === 0 ? null : {
        kind: "failure",
        type: "not-calibrated",
        message: failed[0],
        detail: failed.join("\n"),
      },
    });
  }
  for (const [name, v] of Object.entries(result.damaged)) {
    const run = v.run;
    const mine = problemsOf(`${name} `).concat(problemsOf(`${name}:`));
    cases.push({
      classname,
      name: `damaged ${name}`,
      ms: run.ms,
      result: !run.ok
        ? { kind: "error", type: run.fault, message: run.message, detail: run.message }
        : v.ok
        ? null
        : {
          kind: "failure",
          type: "not-calibrated",
          message: mine[0] ?? `${name} does not lose what it damages`,
          detail: mine.join("\n"),
        },
    });
  }
  if (result.auto) cases.push(...autoCases(classname, result.auto));
  if (judge) {
    const detail = judge.problems.join("\n");
    cases.push({
      classname,
      name: "judge consistency",
      ms: 0,
      result: judge.ok
        ? null
        : { kind: "failure", type: "judge", message: judge.problems[0], detail },
    });
  }
  const automatic = new Set([...(result.auto?.problems ?? []), ...(judge?.problems ?? [])]);
  // Problems that belong to no variant (e.g. no damaged variants at all) fail the suite too.
  const loose = result.problems.filter((p) =>
    !automatic.has(p) &&
    !p.startsWith("the reference") &&
    !Object.keys(result.damaged).some((n) => p.startsWith(`${n} `) || p.startsWith(`${n}:`)) &&
    !(ref === null && p === result.problems[0])
  );
  for (const p of loose) {
    cases.push({
      classname,
      name: "calibration",
      ms: 0,
      result: { kind: "failure", type: "not-calibrated", message: p, detail: p },
    });
  }
  return document(`dvergr calibrate ${bundleName}`, [{ name: `calibrate ${bundleName}`, cases }]);
}

/**
 * The automatic mutations as test cases: one per mutation (skipped when it does not apply,
 * an error when the checker faulted, a failure when a damage did not lower the reward or an
 * invariance moved it) and one for the margin.
 */
function autoCases(classname: string, auto: AutoCalibration): Case[] {
  const cases: Case[] = auto.mutations.map((m): Case => {
    const name = `mutation ${m.name}`;
    if (m.notApplicable !== undefined) {
      return { classname, name, ms: 0, result: { kind: "skipped", message: m.notApplicable } };
    }
    const run = m.run!;
    if (!run.ok) {
      return {
        classname,
        name,
        ms: run.ms,
        result: { kind: "error", type: run.fault, message: run.message, detail: run.message },
      };
    }
    if (m.ok !== false) return { classname, name, ms: run.ms, result: null };
    const message = m.kind === "damaging"
      ? `${m.name} (${m.description}) earns ${
        run.verdict.reward.toFixed(3)
      }, not below the reference`
      : auto.problems.find((p) => p.startsWith(`brittle mutation ${m.name} `)) ?? m.name;
    return {
      classname,
      name,
      ms: run.ms,
      result: {
        kind: "failure",
        type: m.kind === "damaging" ? "not-lower" : "brittle",
        message,
        detail: message,
      },
    };
  });
  const short = auto.problems.find((p) => p.startsWith("margin "));
  cases.push({
    classname,
    name: "margin",
    ms: 0,
    result: short === undefined
      ? null
      : { kind: "failure", type: "margin", message: short, detail: short },
  });
  return cases;
}

/** A planned cell, for benchmarkJunit. */
export interface JunitCell {
  candidate: string;
  caseId: string | null;
  repetition: number;
}

function attemptDetail(r: AttemptRecord): string {
  const lines: string[] = [];
  const e = r.ending;
  if (e?.message) lines.push(e.message);
  const exit = e?.signal
    ? `signal ${e.signal}`
    : e && e.exitCode !== null
    ? `exit status ${e.exitCode}`
    : null;
  if (exit && !e?.message?.includes(exit)) lines.push(exit);
  if (r.fault) lines.push(`${r.fault.source} ${r.fault.kind}: ${r.fault.message}`);
  if (r.failure) lines.push(`${r.failure.kind}: ${r.failure.message}`);
  if (r.verdict) {
    const failed = Object.entries(r.verdict.checks).filter(([, ok]) => ok !== true);
    if (failed.length > 0) lines.push(`failed checks: ${failed.map(([k]) => `:${k}`).join(" ")}`);
    lines.push(`reward ${r.verdict.reward}`);
  }
  if (e?.stderrTail) lines.push("stderr (last lines):", e.stderrTail);
  return lines.join("\n");
}

/**
 * A benchmark as JUnit XML: one suite per candidate, one test case per planned cell
 * (`case <id> repetition <n>`), judged by the latest record of the cell. A cell without a
 * verdict of a candidate in `notNeeded` (its comparison stopped: sequential stopping) is
 * skipped as not needed, not an error.
 */
export function benchmarkJunit(
  bundleName: string,
  cells: readonly JunitCell[],
  records: readonly AttemptRecord[],
  notNeeded: ReadonlySet<string> = new Set(),
): string {
  const byKey = new Map(records.map((r) => [cellKey(r.candidate, r.caseId, r.repetition), r]));
  const candidates = [...new Set(cells.map((c) => c.candidate))];
  const suites = candidates.map((candidate) => ({
    name: `${bundleName} ${candidate}`,
    cases: cells.filter((c) => c.candidate === candidate).map((cell): Case => {
      const r = byKey.get(cellKey(cell.candidate, cell.caseId, cell.repetition));
      const name = `${
        cell.caseId === null ? "" : `case ${cell.caseId} `
      }repetition ${cell.repetition}`;
      const classname = `${bundleName}.${candidate}`;
      if (r?.verdict == null && notNeeded.has(candidate)) {
        return {
          classname,
          name,
          ms: 0,
          result: { kind: "skipped", message: "not needed: the comparison stopped when decided" },
        };
      }
      if (!r) {
        return {
          classname,
          name,
          ms: 0,
          result: { kind: "skipped", message: "the cell did not run (run the benchmark again)" },
        };
      }
      const outcome = outcomeOf(r);
      if (outcome === "passed") return { classname, name, ms: r.elapsedMs, result: null };
      const cause = causeOf(r)?.[1] ?? OUTCOME_TEXT[outcome];
      return {
        classname,
        name,
        ms: r.elapsedMs,
        result: {
          kind: outcome === "fault" ? "error" : "failure",
          type: outcome,
          message: `${OUTCOME_TEXT[outcome]}: ${cause}`,
          detail: attemptDetail(r),
        },
      };
    }),
  }));
  return document(`dvergr benchmark ${bundleName}`, suites);
}
