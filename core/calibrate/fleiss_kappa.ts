/**
 * Fleiss' kappa (Fleiss 1971): agreement among a fixed number of ratings per subject,
 * beyond what the share of each category would give by chance. Here the subjects are
 * judge requests and the ratings the judge's k answers to each.
 */

/**
 * Kappa of a table of counts: `counts[i][j]` is how many of subject i's ratings fell in
 * category j; every subject has the same number n ≥ 2 of ratings. 1 is perfect agreement,
 * 0 agreement by chance, below 0 less than chance. Null when it is undefined: no subjects,
 * or every rating in one category (nothing to tell apart from chance).
 */
export function fleissKappa(counts: number[][]): number | null {
  if (counts.length === 0) return null;
  const n = counts[0].reduce((a, b) => a + b, 0);
  if (n < 2 || counts.some((row) => row.reduce((a, b) => a + b, 0) !== n)) {
    throw new RangeError("fleissKappa() needs the same number (≥ 2) of ratings per subject");
  }
  const subjects = counts.length;
  const categories = Math.max(...counts.map((r) => r.length));
  // P̄: the mean over subjects of the share of rating pairs that agree.
  let agree = 0;
  for (const row of counts) {
    agree += (row.reduce((a, c) => a + c * c, 0) - n) / (n * (n - 1));
  }
  const pBar = agree / subjects;
  // P̄e: agreement expected from the categories' overall shares.
  let pe = 0;
  for (let j = 0; j < categories; j++) {
    const share = counts.reduce((a, row) => a + (row[j] ?? 0), 0) / (subjects * n);
    pe += share * share;
  }
  if (pe >= 1 - 1e-12) return null;
  return (pBar - pe) / (1 - pe);
}
