/**
 * A request for a model that is not the attempt's is a failure, never a fault: a candidate
 * that asks for `local` (an OpenAI-compatible server on the host's loopback) whenever it
 * does not know the answer is refused by the gateway before anything is sent, and the
 * attempt fails with that cause; nothing is retried, so it ranks with its honest twin.
 * Before, the gateway forwarded the request to 127.0.0.1:8080, the refused connection made
 * the cell a fault, and the fault ran again.
 */
import assert from "node:assert/strict";
import { dvergrWithPath as dvergr } from "../helpers/cli.ts";
import { wordDataset, writeBundleTo } from "../helpers/dataset_bundle.ts";

/** Both know case c<n>'s word on repetition r exactly when n + r is even: 3 of 6 cells. */
const KNOWS = "n=${DVERGR_CASE#c}; if [ $(( (n + DVERGR_REPETITION) % 2 )) = 0 ]; then " +
  "cat docs/q.txt > out/answer.txt; else ";
const ASK_LOCAL = `curl -s -o /dev/null "$OPENAI_BASE_URL/chat/completions" ` +
  `-H 'content-type: application/json' ` +
  `-d '{"model":"local","max_tokens":5,"messages":[{"role":"user","content":"w?"}]}'`;

interface Card {
  candidate: string;
  attempts: number;
  passes: number;
  faults: number;
  passInterval: [number, number];
  cost: { retriedTries: number };
  outcomes: Record<string, number>;
}

Deno.test("dvergr benchmark fails an attempt that asks for a model not its own, and ranks it with its honest twin", async () => {
  const dir = await writeBundleTo(wordDataset(3));
  const home = await Deno.makeTempDir();
  const args = [
    "benchmark",
    dir,
    "--candidate",
    `honest=cmd:${KNOWS}echo no > out/answer.txt; fi`,
    "--candidate",
    `asker=cmd:${KNOWS}${ASK_LOCAL}; fi`,
    "--repetitions",
    "2",
    "--home",
    home,
    "--json",
  ];
  try {
    // The run and a rerun of the same command: nothing is left to retry.
    for (let run = 0; run < 2; run++) {
      const r = await dvergr(args);
      assert.equal(r.code, 0, r.err);
      if (run > 0) assert.match(r.err, /12 cells, 12 kept from earlier runs/);
      const j = JSON.parse(r.out);
      const cards = Object.fromEntries(
        (j.scorecard.candidates as Card[]).map((c) => [c.candidate, c]),
      );
      for (const name of ["honest", "asker"]) {
        const c = cards[name];
        assert.deepEqual(
          [c.attempts, c.passes, c.faults, c.cost.retriedTries],
          [6, 3, 0, 0],
          `${name} after run ${run}`,
        );
      }
      assert.deepEqual(cards.asker.passInterval, cards.honest.passInterval);
      assert.equal(cards.asker.outcomes.crashed, 3);
      assert.match(
        j.failureCauses.asker[0].cause,
        /^Refused a model request: model "local" is not one of this attempt's models/,
      );
    }
  } finally {
    await Deno.remove(home, { recursive: true });
    await Deno.remove(dir.slice(0, dir.lastIndexOf("/")), { recursive: true });
  }
});
