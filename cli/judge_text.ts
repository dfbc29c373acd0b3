import type { JudgeConsistency } from "../core/calibrate/judge_consistency.ts";

function figure(x: number | null, none: string): string {
  return x === null ? none : x.toFixed(2);
}

/**
 * `calibrate --judge-consistency` as lines: per request what the judge said on each ask,
 * its majority and calibration.edn's answer, then kappa, flip rate and position bias.
 */
export function judgeLines(j: JudgeConsistency): string[] {
  const n = j.requests.length;
  const lines = [
    `Judge consistency (${n} request${n === 1 ? "" : "s"}, each asked ${j.k} times):`,
  ];
  const width = Math.max(16, ...j.requests.map((r) => r.id.length + 2));
  for (const r of j.requests) {
    const options = r.options > 0 ? `  (${r.options} options, rotated)` : "";
    const expected = r.expectedSaid === null ? "" : `  calibration: ${r.expectedSaid}`;
    const flip = r.flipped ? "  FLIPPED" : "";
    lines.push(
      `  ${r.id.padEnd(width)}${r.said.join(" | ")}  majority: ${
        r.majority ?? "none"
      }${expected}${options}${flip}`,
    );
  }
  const kappa = figure(j.kappa, "undefined (one answer throughout)");
  lines.push(
    `kappa ${kappa} (minimum ${j.minKappa}${j.noiseAccepted ? ", noise accepted" : ""})  ` +
      `flip rate ${figure(j.flipRate, "n/a")}  position bias ${
        figure(j.positionBias, "n/a (no request lists options)")
      }`,
  );
  return lines;
}
