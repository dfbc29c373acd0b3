/**
 * A failure is never a fault: a candidate that exits 127 whenever it does not know the
 * answer gets no retry for it (a fault runs again, in the run and on every rerun), so it
 * ranks with an honest candidate of the same skill that writes its wrong answer.
 */
import assert from "node:assert/strict";
import { benchmarkTwins } from "../helpers/twins.ts";

Deno.test("dvergr benchmark ranks a candidate that exits 127 when wrong with its honest twin, rerun after rerun", async () => {
  // The run and four reruns of the same command.
  await benchmarkTwins("cheater", "exit 127", {
    repetitions: 4,
    runs: 5,
    each: ({ cards, failureCauses }) => {
      assert.equal(cards.honest.rankedPassRate, 0.5);
      assert.equal(cards.cheater.rankedPassRate, 0.5);
      assert.equal(cards.cheater.outcomes.crashed, 6);
      assert.match(failureCauses.cheater[0].cause, /^the shell could not run it \(exit 127\)/);
    },
  });
});
