/**
 * Textual mutations of an answer that is not EDN, and the character and number edits the
 * EDN mutations share. Each returns the changed text, or null when the text has nothing
 * the mutation could change. Pure.
 */

/** One character of `c` changed: the next letter or digit (z → a, 9 → 0), else `x`. */
function nextChar(c: string): string {
  if (/[a-yA-Y0-8]/.test(c)) return String.fromCharCode(c.charCodeAt(0) + 1);
  if (c === "z") return "a";
  if (c === "Z") return "A";
  if (c === "9") return "0";
  return c === "x" ? "y" : "x";
}

/**
 * `s` with its middle letter or digit changed (the middle character when it has none);
 * the empty string has nothing to change and is returned as it is.
 */
export function changeOneChar(s: string): string {
  const chars = Array.from(s);
  if (chars.length === 0) return s;
  const alnum = chars.flatMap((c, i) => (/[\p{L}\p{N}]/u.test(c) ? [i] : []));
  const i = alnum.length > 0 ? alnum[Math.floor(alnum.length / 2)] : Math.floor(chars.length / 2);
  chars[i] = nextChar(chars[i]);
  return chars.join("");
}

/** A numeric damage: `n · 10^power + add`, or `-n` when `negate` (0 is left alone). */
export interface NumberEdit {
  add: number;
  power: number;
  negate?: boolean;
}

/** The numeric damages by mutation name. */
export const NUMBER_EDITS = {
  "numbers-plus-one": { add: 1, power: 0 },
  "numbers-minus-one": { add: -1, power: 0 },
  "numbers-times-ten": { add: 0, power: 1 },
  "numbers-negated": { add: 0, power: 0, negate: true },
} as const satisfies Record<string, NumberEdit>;

/** An integer edited (null: the edit leaves it as it is). */
export function editInteger(n: bigint, e: NumberEdit): bigint | null {
  if (e.negate) return n === 0n ? null : -n;
  return n * 10n ** BigInt(e.power) + BigInt(e.add);
}

/** The decimals `x` is written with (its shortest form), or null in exponent form. */
function decimalsOf(text: string): number | null {
  if (/e/i.test(text)) return null;
  return text.includes(".") ? text.length - text.indexOf(".") - 1 : 0;
}

/**
 * A float edited, rounded to the decimals it was written with (fewer by `power`), so
 * 272.27 + 1 is 273.27 and not 273.27000000000004 (null: the edit leaves it as it is).
 */
export function editFloat(x: number, e: NumberEdit): number | null {
  if (e.negate) return x === 0 ? null : -x;
  const r = x * 10 ** e.power + e.add;
  const d = decimalsOf(String(x));
  return d === null ? r : Number(r.toFixed(Math.max(0, d - e.power)));
}

/**
 * A number in text: optional minus, digits, optional fraction, standing alone: not glued
 * to letters, digits or the `.` `,` `-` `/` `:` of dates, times, versions and grouped
 * amounts (so `2025-03-14`, `10:30`, `1,234.56` and `v2` are not numbers).
 */
const TEXT_NUMBER = /(?<![\p{L}\p{N}_.,:/-])-?\d+(?:\.\d+)?(?![\p{L}\p{N}_/:-]|[.,]\d)/gu;

/** Every standalone number of `text` edited, written with its decimals (none: null). */
export function editTextNumbers(text: string, e: NumberEdit): string | null {
  let changed = false;
  const out = text.replace(TEXT_NUMBER, (token) => {
    const d = decimalsOf(token)!;
    if (d === 0) {
      const r = editInteger(BigInt(token), e);
      if (r === null) return token;
      changed = true;
      return r.toString();
    }
    const r = editFloat(Number(token), e);
    if (r === null) return token;
    changed = true;
    return r.toFixed(e.negate ? d : Math.max(0, d - e.power));
  });
  return changed ? out : null;
}

/** Every word of `text` (a letter, then letters and digits) with one character changed. */
export function changeWords(text: string): string | null {
  const out = text.replace(/\p{L}[\p{L}\p{N}]*/gu, changeOneChar);
  return out === text ? null : out;
}

/** The index of the last line holding more than whitespace, when there are two such lines. */
function lastEntry(lines: string[]): number | null {
  const full = lines.flatMap((l, i) => (l.trim() === "" ? [] : [i]));
  return full.length >= 2 ? full[full.length - 1] : null;
}

/** `text` without its last non-blank line (text of fewer than two such lines: null). */
export function dropLastLine(text: string): string | null {
  const lines = text.split("\n");
  const i = lastEntry(lines);
  if (i === null) return null;
  lines.splice(i, 1);
  return lines.join("\n");
}

/** `text` with its last non-blank line repeated after it (fewer than two such lines: null). */
export function repeatLastLine(text: string): string | null {
  const lines = text.split("\n");
  const i = lastEntry(lines);
  if (i === null) return null;
  lines.splice(i + 1, 0, lines[i]);
  return lines.join("\n");
}

/** Every non-blank line indented by two more spaces (blank text: null). */
export function indentLines(text: string): string | null {
  if (text.trim() === "") return null;
  return text.split("\n").map((l) => (l.trim() === "" ? l : "  " + l)).join("\n");
}

/** A trailing newline added, or the trailing newlines removed when it has some. */
export function toggleTrailingNewline(text: string): string {
  return /\n$/.test(text) ? text.replace(/(\r?\n)+$/, "") : text + "\n";
}

/** The first half of `text`, by characters (empty text: null). */
export function firstHalf(text: string): string | null {
  const chars = Array.from(text);
  if (chars.length === 0) return null;
  return chars.slice(0, Math.floor(chars.length / 2)).join("");
}
