/**
 * A failure is never a fault: a candidate that exits 127 whenever it does not know the
 * answer gets no retry for it (a fault runs again, in the run and on every rerun), so it
 * ranks with an honest candidate of the same skill that writes its wrong answer.
 */
import assert from "node:assert/strict";
import { dvergrWithPath as dvergr } from "../helpers/cli.ts";
import { wordDataset, writeBundleTo } from "../helpers/dataset_bundle.ts";

/** Both know case c<n>'s word on repetition r exactly when n + r is even: 6 of 12 cells. */
const KNOWS = "n=${DVERGR_CASE#c}; if [ $(( (n + DVERGR_REPETITION) % 2 )) = 0 ]; then " +
  "cat docs/q.txt > out/answer.txt; else ";

interface Card {
  candidate: string;
  attempts: number;
  passes: number;
  faults: number;
  passInterval: [number, number];
  rankedPassRate: number;
  cost: { retriedTries: number };
  outcomes: Record<string, number>;
}

Deno.test("dvergr benchmark ranks a candidate that exits 127 when wrong with its honest twin, rerun after rerun", async () => {
  const dir = await writeBundleTo(wordDataset(3));
  const home = await Deno.makeTempDir();
  const args = [
    "benchmark",
    dir,
    "--candidate",
    `honest=cmd:${KNOWS}echo no > out/answer.txt; fi`,
    "--candidate",
    `cheater=cmd:${KNOWS}exit 127; fi`,
    "--repetitions",
    "4",
    "--home",
    home,
    "--json",
  ];
  // The run and four reruns of the same command.
  for (let run = 0; run < 5; run++) {
    const r = await dvergr(args);
    assert.equal(r.code, 0, r.err);
    if (run > 0) assert.match(r.err, /24 cells, 24 kept from earlier runs/);
    const j = JSON.parse(r.out);
    const cards = Object.fromEntries(
      (j.scorecard.candidates as Card[]).map((c) => [c.candidate, c]),
    );
    for (const name of ["honest", "cheater"]) {
      const c = cards[name];
      assert.deepEqual(
        [c.attempts, c.passes, c.faults, c.cost.retriedTries],
        [12, 6, 0, 0],
        `${name} after run ${run}: ${JSON.stringify(j.failureCauses[name])}`,
      );
      assert.equal(c.rankedPassRate, 0.5);
    }
    assert.deepEqual(cards.cheater.passInterval, cards.honest.passInterval);
    assert.equal(cards.cheater.outcomes.crashed, 6);
    assert.match(
      j.failureCauses.cheater[0].cause,
      /^the shell could not run it \(exit 127\)/,
    );
  }
  await Deno.remove(home, { recursive: true });
  await Deno.remove(dir.slice(0, dir.lastIndexOf("/")), { recursive: true });
});
