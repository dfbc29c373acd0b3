/** Names near a mistyped one, for "did you mean" hints. Pure. */

/** Up to `max` names near `name` (edit distance, or one containing the other), nearest first. */
export function closeMatches(name: string, names: Iterable<string>, max = 5): string[] {
  const q = name.toLowerCase();
  const scored: [number, string][] = [];
  for (const n of names) {
    const c = n.toLowerCase();
    const d = editDistance(q, c);
    const limit = Math.max(2, Math.floor(Math.max(q.length, c.length) / 4));
    if (d <= limit || (q.length >= 3 && (c.includes(q) || q.includes(c) && c.length >= 3))) {
      scored.push([d, n]);
    }
  }
  scored.sort((a, b) => a[0] - b[0] || (a[1] < b[1] ? -1 : a[1] > b[1] ? 1 : 0));
  return scored.slice(0, max).map(([, n]) => n);
}

function editDistance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const cur = [i];
    for (let j = 1; j <= b.length; j++) {
      cur[j] = Math.min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    prev = cur;
  }
  return prev[b.length];
}
