/**
 * A small bundle (answer `{:city "Oslo" :population 709037}` in /out/answer.edn) and
 * three checkers of known weakness for it: one rewards any non-empty answer, one reads
 * the answer's text with a regular expression (whitespace matters to it), one is right.
 */
import type { FileMap } from "../../core/bundle/file_map.ts";

/** Rewards any answer that is not empty. */
export const ANY_ANSWER_CHECKER = `
export function check({ files }) {
  const text = files["/out/answer.edn"] ?? "";
  return { checks: { answered: text.length > 0 }, reward: text.length > 0 ? 1 : 0 };
}
`;

/** Reads the answer with a regular expression over its text: whitespace matters to it. */
export const TEXT_CHECKER = `
export function check({ files, gold }) {
  const m = /^\\{:city "([^"]*)" :population (\\d+)\\}$/.exec(files["/out/answer.edn"] ?? "");
  const city = m !== null && m[1] === gold.city;
  const population = m !== null && Number(m[2]) === gold.population;
  return { checks: { city, population }, reward: (city ? 0.5 : 0) + (population ? 0.5 : 0) };
}
`;

/** Reads the answer as data and grades each field. */
export const RIGHT_CHECKER = `
export function check({ files, gold }) {
  let a = null;
  try { a = edn.parse(files["/out/answer.edn"] ?? ""); } catch { a = null; }
  const ok = a !== null && typeof a === "object" && !Array.isArray(a);
  const city = ok && typeof a.city === "string" && a.city.trim() === gold.city;
  const population = ok && a.population === gold.population;
  return { checks: { city, population }, reward: (city ? 0.5 : 0) + (population ? 0.5 : 0) };
}
`;

/** The files of a bundle whose answer is `{:city "Oslo" :population 709037}`, graded by `checker`. */
export function cityFiles(checker: string, file = "checker.js"): FileMap {
  return new Map([
    ["workflow.edn", '{:title "City" :task "Write the capital of Norway and its population."}'],
    [file, checker],
    ["gold.edn", '{:city "Oslo" :population 709037}'],
    [
      "calibration.edn",
      '{:reference {"/out/answer.edn" "{:city \\"Oslo\\" :population 709037}"}}',
    ],
    ["fixtures/docs/q.md", "Oslo is the capital of Norway; 709,037 people live there."],
  ]);
}
