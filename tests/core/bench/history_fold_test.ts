import assert from "node:assert/strict";
import { buildScorecard, scorecardOfFold } from "../../../core/bench/scorecard.ts";
import { diagnose, diagnosisOfFold } from "../../../core/bench/diagnosis.ts";
import { foldGroupedHistory, HistoryFold } from "../../../core/bench/history_fold.ts";
import { randomHistory, storedHistory as stored } from "../../helpers/random_records.ts";
import { seededRandom } from "../../../core/seeded_random.ts";

function shuffled<T>(xs: readonly T[], seed: number): T[] {
  const r = seededRandom(seed);
  const out = [...xs];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(r() * (i + 1));
    [out[i], out[j]] = [out[j], out[i]];
  }
  return out;
}

Deno.test("scorecardOfFold() over the streamed history equals buildScorecard() of the records, for random histories", async () => {
  for (let seed = 1000; seed < 1040; seed++) {
    const { records, cases } = randomHistory(seed, seed % 8 === 0 ? "large" : "small");
    const candidates = [...new Set(records.map((r) => r.candidate))].sort();
    const opts = {
      candidates,
      expectedCells: records.length,
      trust: "room" as const,
      bundleId: "b",
      experimentId: "exp-rand",
    };
    const state = await stored(records);
    const fold = new HistoryFold(candidates);
    await foldGroupedHistory(state.streamAttemptHistory("exp-rand"), fold);
    const fromStream = JSON.stringify(scorecardOfFold(fold, opts));
    assert.equal(fromStream, JSON.stringify(buildScorecard(records, opts)), `seed ${seed}`);
    // In any order, the records make the same scorecard and diagnosis.
    const mixed = shuffled(records, seed);
    assert.equal(JSON.stringify(buildScorecard(mixed, opts)), fromStream, `seed ${seed} shuffled`);
    const dOpts = { candidates, cases, bundleCases: 0 };
    assert.equal(
      JSON.stringify(diagnose(mixed, dOpts)),
      JSON.stringify(diagnosisOfFold(fold, dOpts)),
      `seed ${seed} diagnosis`,
    );
    state.close();
  }
});

Deno.test("foldGroupedHistory() takes the highest try of each cell as its latest, in any try order", async () => {
  const { records, candidates } = randomHistory(7, "large");
  const opts = {
    candidates,
    expectedCells: 10,
    trust: "ad-hoc" as const,
    bundleId: "b",
    experimentId: "exp-rand",
  };
  // Tries of each cell together, but the latest first.
  const grouped = [...records].sort((a, b) =>
    a.candidate < b.candidate ? -1 : a.candidate > b.candidate ? 1 : 0
  ).reverse();
  const byCell = Map.groupBy(grouped, (r) => JSON.stringify([r.candidate, r.caseId, r.repetition]));
  const fold = new HistoryFold(candidates);
  await foldGroupedHistory([...byCell.values()].flat(), fold);
  assert.equal(
    JSON.stringify(scorecardOfFold(fold, opts)),
    JSON.stringify(buildScorecard(records, opts)),
  );
});
