import type { AutoCalibration } from "../core/calibrate/auto.ts";
import { runLine } from "./verdict_text.ts";

/**
 * The automatic part of `calibrate --auto` as lines: every mutation with its reward (or
 * why it does not apply), then the margin and the brittle mutations.
 */
export function autoLines(auto: AutoCalibration): string[] {
  const ref = auto.referenceReward;
  const lines = [
    `Automatic mutations of the reference${ref === null ? "" : ` (reward ${ref.toFixed(3)})`}:`,
  ];
  const width = Math.max(18, ...auto.mutations.map((m) => m.name.length + 2));
  for (const m of auto.mutations) {
    const head = `  ${m.kind.padEnd(11)}${m.name.padEnd(width)}`;
    if (m.notApplicable !== undefined) {
      lines.push(`${head}n/a: ${m.notApplicable}`);
      continue;
    }
    const mark = m.ok === false ? (m.kind === "damaging" ? "  NOT LOWER" : "  BRITTLE") : "";
    lines.push(`${head}${runLine(m.run!)}${mark}`);
  }
  if (auto.margin !== null) {
    lines.push(
      `margin ${auto.margin.toFixed(3)} (minimum ${
        auto.minMargin.toFixed(3)
      }): the closest damage is ${auto.closest}`,
    );
  }
  lines.push(`brittle: ${auto.brittle.length === 0 ? "none" : auto.brittle.join(", ")}`);
  return lines;
}
