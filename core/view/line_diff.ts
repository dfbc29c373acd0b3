/**
 * A line diff of two texts, for the viewer's "files against the fixtures": the lines kept,
 * removed and added, with unchanged runs far from a change folded. Common head and tail
 * are matched first; the middle by a longest common subsequence when it is small enough
 * (at most MAX_CELLS line pairs), else replaced whole. Pure.
 */

/** One line of a diff: kept (" "), removed ("-"), added ("+"), or a fold of `folded` lines. */
export type DiffLine =
  | { op: " " | "-" | "+"; text: string }
  | { op: "…"; folded: number };

/** Line pairs the LCS table may hold (memory: one Uint32 each). */
const MAX_CELLS = 2_000_000;
/** Unchanged lines shown around a change. */
const CONTEXT = 3;

function splitLines(text: string): string[] {
  if (text === "") return [];
  const lines = text.split("\n");
  if (lines[lines.length - 1] === "") lines.pop();
  return lines;
}

/** The middle's edit script by LCS: a table of suffix lengths, walked from the start. */
function middleDiff(a: string[], b: string[]): DiffLine[] {
  if (a.length * b.length > MAX_CELLS) {
    return [
      ...a.map((text) => ({ op: "-" as const, text })),
      ...b.map((text) => ({ op: "+" as const, text })),
    ];
  }
  const w = b.length + 1;
  const t = new Uint32Array((a.length + 1) * w);
  for (let i = a.length - 1; i >= 0; i--) {
    for (let j = b.length - 1; j >= 0; j--) {
      t[i * w + j] = a[i] === b[j]
        ? t[(i + 1) * w + j + 1] + 1
        : Math.max(t[(i + 1) * w + j], t[i * w + j + 1]);
    }
  }
  const out: DiffLine[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) {
    if (a[i] === b[j]) {
      out.push({ op: " ", text: a[i++] });
      j++;
    } else if (t[(i + 1) * w + j] >= t[i * w + j + 1]) out.push({ op: "-", text: a[i++] });
    else out.push({ op: "+", text: b[j++] });
  }
  while (i < a.length) out.push({ op: "-", text: a[i++] });
  while (j < b.length) out.push({ op: "+", text: b[j++] });
  return out;
}

/** Folds unchanged runs more than CONTEXT lines from any change. */
function fold(lines: DiffLine[]): DiffLine[] {
  const near = new Array(lines.length).fill(false);
  lines.forEach((l, k) => {
    if (l.op === " ") return;
    for (let d = -CONTEXT; d <= CONTEXT; d++) if (lines[k + d]) near[k + d] = true;
  });
  const out: DiffLine[] = [];
  for (let k = 0; k < lines.length; k++) {
    if (near[k]) {
      out.push(lines[k]);
      continue;
    }
    let n = 0;
    while (k < lines.length && !near[k]) {
      n++;
      k++;
    }
    k--;
    out.push({ op: "…", folded: n });
  }
  return out;
}

/** The diff of `before` into `after`, folded; empty when they are equal. */
export function lineDiff(before: string, after: string): DiffLine[] {
  if (before === after) return [];
  const a = splitLines(before);
  const b = splitLines(after);
  let head = 0;
  while (head < a.length && head < b.length && a[head] === b[head]) head++;
  let tail = 0;
  while (
    tail < a.length - head && tail < b.length - head &&
    a[a.length - 1 - tail] === b[b.length - 1 - tail]
  ) tail++;
  const lines: DiffLine[] = [
    ...a.slice(0, head).map((text) => ({ op: " " as const, text })),
    ...middleDiff(a.slice(head, a.length - tail), b.slice(head, b.length - tail)),
    ...a.slice(a.length - tail).map((text) => ({ op: " " as const, text })),
  ];
  return fold(lines);
}
