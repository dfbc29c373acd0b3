/**
 * Twin benchmarks: an honest `cmd:` candidate and a twin of the same skill that does something
 * else when it does not know the answer (exits 127, asks for a model not its own…). Nothing the
 * twin does may become a fault, a retry or a better rank, in the run or on any rerun.
 */
import assert from "node:assert/strict";
import { dvergrWithPath as dvergr } from "./cli.ts";
import { wordDataset, writeBundleTo } from "./dataset_bundle.ts";

/**
 * The start of a candidate's shell script: it knows case c<n>'s word on repetition r exactly
 * when n + r is even (half the cells) and writes it; what follows runs when it does not know.
 */
export const KNOWS_HALF = "n=${DVERGR_CASE#c}; if [ $(( (n + DVERGR_REPETITION) % 2 )) = 0 ]; " +
  "then cat docs/q.txt > out/answer.txt; else ";

export interface TwinCard {
  candidate: string;
  attempts: number;
  passes: number;
  faults: number;
  passInterval: [number, number];
  rankedPassRate: number;
  cost: { retriedTries: number };
  outcomes: Record<string, number>;
}

/** What one run of the twins printed: the scorecard by candidate and the failure causes. */
export interface TwinRun {
  cards: Record<string, TwinCard>;
  failureCauses: Record<string, { cause: string }[]>;
}

/**
 * Benchmarks `honest` (writes "no" when it does not know) against `twin=cmd:KNOWS_HALF <when
 * wrong>; fi` on three word cases, `runs` times on one home, and checks after every run that
 * both have every cell graded with half of them passed, no fault and no retried try, the
 * same interval, and (after the first) that the rerun kept every cell. `each` checks the rest.
 */
export async function benchmarkTwins(
  twin: string,
  whenWrong: string,
  opts: {
    repetitions: number;
    runs: number;
    each?: (run: TwinRun, n: number) => void;
    /** Prepares the home before the first run (e.g. its models.edn). */
    home?: (home: string) => Promise<void>;
    /** dvergr's environment beyond PATH. */
    env?: Record<string, string>;
  },
): Promise<void> {
  const dir = await writeBundleTo(wordDataset(3));
  const home = await Deno.makeTempDir();
  await opts.home?.(home);
  const cells = 3 * opts.repetitions * 2;
  const args = [
    "benchmark",
    dir,
    "--candidate",
    `honest=cmd:${KNOWS_HALF}echo no > out/answer.txt; fi`,
    "--candidate",
    `${twin}=cmd:${KNOWS_HALF}${whenWrong}; fi`,
    "--repetitions",
    String(opts.repetitions),
    "--home",
    home,
    "--json",
  ];
  try {
    for (let n = 0; n < opts.runs; n++) {
      const r = await dvergr(args, opts.env);
      assert.equal(r.code, 0, r.err);
      if (n > 0) assert.match(r.err, new RegExp(`${cells} cells, ${cells} kept from earlier runs`));
      const j = JSON.parse(r.out);
      const cards: Record<string, TwinCard> = Object.fromEntries(
        (j.scorecard.candidates as TwinCard[]).map((c) => [c.candidate, c]),
      );
      for (const name of ["honest", twin]) {
        const c = cards[name];
        assert.deepEqual(
          [c.attempts, c.passes, c.faults, c.cost.retriedTries],
          [cells / 2, cells / 4, 0, 0],
          `${name} after run ${n}: ${JSON.stringify(j.failureCauses[name])}`,
        );
      }
      assert.deepEqual(cards[twin].passInterval, cards.honest.passInterval);
      opts.each?.({ cards, failureCauses: j.failureCauses }, n);
    }
  } finally {
    await Deno.remove(home, { recursive: true });
    await Deno.remove(dir.slice(0, dir.lastIndexOf("/")), { recursive: true });
  }
}
