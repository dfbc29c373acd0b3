/**
 * The grading rules of case packs (docs/compatibility.md §6.5), written once.
 *
 * Every function here is self-contained: it refers to nothing but its arguments, the
 * language's built-ins and the other functions of this module, by name. The generated
 * checker.js embeds their source text (`Function.prototype.toString()`; Deno has
 * stripped the types by then), so the host's certification and the sandboxed checker
 * apply one implementation. Keep it that way: no imports, no module-level constants.
 */

/** The rules an expected field can be graded by. */
export const RULES = ["exact", "ci", "number", "set", "date"] as const;
export type Rule = typeof RULES[number];

/** The tolerance of the `number` rule when the field names none. */
export const DEFAULT_TOLERANCE = 0.005;

/**
 * A value as normalised text: trimmed, whitespace runs collapsed to one space.
 * null/undefined are "", numbers and booleans their printed form, arrays and
 * objects their JSON text.
 */
export function casepackText(x: unknown): string {
  let s: string;
  if (x === null || x === undefined) s = "";
  else if (typeof x === "string") s = x;
  else if (typeof x === "number" || typeof x === "boolean" || typeof x === "bigint") s = String(x);
  else s = JSON.stringify(x) ?? "";
  return s.trim().replace(/\s+/g, " ");
}

/**
 * A value as a number, or null. Numbers are themselves (when finite). In text,
 * whitespace, `'`, `€` and `$` are removed; when both `,` and `.` occur, the later one
 * is the decimal separator and the other is dropped; else `-?digits,d` or `-?digits,dd`
 * has a decimal comma; otherwise commas are thousands separators. What remains must be
 * `-?` digits with an optional fraction (or `.digits`) and exponent; no leading `+`.
 * So "1.234,56" and "1,234.56" are 1234.56, "119,00" is 119, "1,234" is 1234,
 * "1'234.50" is 1234.5, "5 €" is 5 and "about 20" is null.
 */
export function casepackNumber(x: unknown): number | null {
  if (typeof x === "number") return Number.isFinite(x) ? x : null;
  if (typeof x !== "string") return null;
  let s = x.replace(/[\s'€$]/g, "");
  const comma = s.lastIndexOf(",");
  const dot = s.lastIndexOf(".");
  if (comma >= 0 && dot >= 0) {
    s = comma > dot ? s.replace(/\./g, "").replace(/,/g, ".") : s.replace(/,/g, "");
  } else if (/^-?\d+,\d{1,2}$/.test(s)) {
    s = s.replace(",", ".");
  } else {
    s = s.replace(/,/g, "");
  }
  // One way to match each text, so a failed match is linear: `\d+\.?\d*` would try every
  // split of a digit run between its two quantifiers (quadratic on "111…1x").
  if (!/^-?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$/.test(s)) return null;
  const n = Number(s);
  return Number.isFinite(n) ? n : null;
}

/**
 * A value as a date `[year, month, day]`, or null: `yyyy-m-d` at the start of the text
 * (anything may follow, e.g. a time) or exactly `d.m.yyyy`. No range validation.
 */
export function casepackDate(x: unknown): number[] | null {
  const s = casepackText(x);
  const iso = /^(\d{4})-(\d{1,2})-(\d{1,2})/.exec(s);
  if (iso) return [Number(iso[1]), Number(iso[2]), Number(iso[3])];
  const de = /^(\d{1,2})\.(\d{1,2})\.(\d{4})$/.exec(s);
  if (de) return [Number(de[3]), Number(de[2]), Number(de[1])];
  return null;
}

/**
 * A value as a set of items: an array's elements, or text split on `,` `;` `|`; each
 * normalised (casepackText) and lower-cased; blanks removed. Sorted and without
 * duplicates, so two item lists are the same set iff their results are equal.
 */
export function casepackItems(x: unknown): string[] {
  const parts = Array.isArray(x) ? x : casepackText(x).split(/[,;|]/);
  const set = new Set<string>();
  for (const p of parts) {
    const t = casepackText(p).toLowerCase();
    if (t !== "") set.add(t);
  }
  return [...set].sort();
}

/**
 * Whether the answer value `got` is right for the expected value `want` under `rule`:
 * `ci` lower-cased text equality; `number` both read as numbers within the tolerance
 * (default 0.005; the rounding of doubles, a few units in the last place, is
 * absorbed); `set` equal item sets;
 * `date` the same (year, month, day); `exact` (and any other rule) numeric equality
 * when both read as numbers and the answer is an actual number, else text equality.
 * A missing (null/undefined) answer value is never right.
 */
export function casepackFieldRight(
  rule: unknown,
  tolerance: unknown,
  want: unknown,
  got: unknown,
): boolean {
  if (got === null || got === undefined) return false;
  if (rule === "ci") {
    return casepackText(want).toLowerCase() === casepackText(got).toLowerCase();
  }
  if (rule === "number") {
    const w = casepackNumber(want);
    const g = casepackNumber(got);
    if (w === null || g === null) return false;
    const tol = typeof tolerance === "number" && Number.isFinite(tolerance)
      ? tolerance
      : DEFAULT_TOLERANCE;
    // Reading decimals as doubles and subtracting errs by a few units in the last
    // place of the operands: allow that much, so 1234.57 is within 0.01 of 1234.56,
    // and no more, so a millionth beyond the tolerance is wrong for any amount.
    const rounding = 4 * Number.EPSILON * (Math.max(Math.abs(w), Math.abs(g)) + tol);
    return Math.abs(w - g) <= tol + rounding;
  }
  if (rule === "set") {
    const a = casepackItems(want);
    const b = casepackItems(got);
    return a.length === b.length && a.every((v, i) => v === b[i]);
  }
  if (rule === "date") {
    const w = casepackDate(want);
    const g = casepackDate(got);
    return w !== null && g !== null && w[0] === g[0] && w[1] === g[1] && w[2] === g[2];
  }
  const w = casepackNumber(want);
  const g = casepackNumber(got);
  if (w !== null && g !== null && typeof got === "number") return w === g;
  return casepackText(want) === casepackText(got);
}

/**
 * The check name of an expected field: lower-cased, every run of characters outside
 * `[a-z0-9]` replaced by `-` ("vendor_name" → "vendor-name", "Due Date" → "due-date").
 */
export function casepackCheckKey(field: string): string {
  return field.toLowerCase().replace(/[^a-z0-9]+/g, "-");
}

/**
 * Grades an answer (a plain object from field name to value, or anything else for "no
 * answer") against the expected values under the field specs `{field: {rule,
 * tolerance}}`: the check `answer-present` plus one check per field (named by
 * casepackCheckKey); the reward is the share of fields right (0 without fields).
 */
export function casepackGrade(
  answer: unknown,
  fields: Record<string, { rule?: unknown; tolerance?: unknown } | null | undefined>,
  expected: Record<string, unknown> | null | undefined,
): { checks: Record<string, boolean>; reward: number } {
  const own = (o: unknown, k: string) =>
    o !== null && typeof o === "object" && Object.prototype.hasOwnProperty.call(o, k);
  const present = answer !== null && typeof answer === "object" && !Array.isArray(answer);
  const checks: Record<string, boolean> = { "answer-present": present };
  let right = 0;
  let count = 0;
  for (const field of Object.keys(fields ?? {})) {
    const spec = fields[field] ?? {};
    const want = own(expected, field) ? (expected as Record<string, unknown>)[field] : undefined;
    const got = present && own(answer, field)
      ? (answer as Record<string, unknown>)[field]
      : undefined;
    const ok = present && casepackFieldRight(spec.rule, spec.tolerance, want, got);
    checks[casepackCheckKey(field)] = ok;
    count++;
    if (ok) right++;
  }
  return { checks, reward: count === 0 ? 0 : right / count };
}

/**
 * The case-pack checker on a checker input: reads `/out/answer.edn` with `parse`
 * (unreadable or not a map is no answer; keys are field names whether written as
 * strings or keywords), the field specs from `params.fields` and the expected values
 * from `gold.expected`, and grades with casepackGrade.
 */
export function casepackCheck(
  input: { files?: Record<string, unknown>; params?: unknown; gold?: unknown },
  parse: (text: string) => unknown,
): { checks: Record<string, boolean>; reward: number } {
  const text = input.files ? input.files["/out/answer.edn"] : undefined;
  let answer: unknown = null;
  if (typeof text === "string") {
    try {
      answer = parse(text);
    } catch {
      answer = null;
    }
  }
  const params = (input.params ?? {}) as { fields?: Record<string, { rule?: unknown }> };
  const gold = (input.gold ?? {}) as { expected?: Record<string, unknown> };
  return casepackGrade(answer, params.fields ?? {}, gold.expected ?? {});
}
