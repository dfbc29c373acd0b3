import assert from "node:assert/strict";
import {
  addDifference,
  newSequence,
  sequenceMean,
  sequenceStatus,
} from "../../../core/bench/confidence_sequence.ts";
import {
  type ComparisonStop,
  SequentialComparisons,
  type StoppingRule,
} from "../../../core/bench/sequential.ts";
import { tQuantile975 } from "../../../core/bench/stats.ts";
import { seededRandom } from "../../../core/seeded_random.ts";

const RULE: StoppingRule = { baseline: "base", alpha: 0.05, delta: 0.02 };
const RUNS = 1000;

/**
 * One simulated run of a candidate and the baseline with pass rates `pCandidate` and
 * `pBaseline` (reward 1 or 0) over `pairs` pairs, looking after every pair: the two cells
 * of a pair are noted one after the other, in a random order, as a run's would settle.
 */
function simulate(
  pCandidate: number,
  pBaseline: number,
  pairs: number,
  rand: () => number,
  rule: StoppingRule = RULE,
): { stop: ComparisonStop; cells: number } {
  const seq = new SequentialComparisons(["cand", "base"], pairs, rule);
  let cells = 0;
  for (let p = 0; p < pairs && !seq.allStopped; p++) {
    const rewards = [rand() < pCandidate ? 1 : 0, rand() < pBaseline ? 1 : 0];
    const order = rand() < 0.5 ? [0, 1] : [1, 0];
    for (const a of order) {
      seq.note(a, p, rewards[a]);
      cells++;
    }
  }
  return { stop: seq.comparisons()[0], cells };
}

Deno.test("SequentialComparisons keeps the error at most alpha over 1,000 runs that look after every pair", () => {
  const rand = seededRandom(20260101);
  let decided = 0;
  for (let run = 0; run < RUNS; run++) {
    // No difference: a decision either way is an error.
    if (simulate(0.5, 0.5, 200, rand).stop.status === "decided") decided++;
  }
  assert.ok(decided <= RULE.alpha * RUNS, `${decided} of ${RUNS} runs decided a difference of 0`);
});

Deno.test("addDifference() keeps the error at most alpha for rewards spread over [0, 1]", () => {
  const rand = seededRandom(7);
  let missed = 0;
  for (let run = 0; run < RUNS; run++) {
    // Both sides draw rewards from the same skewed distribution: the mean difference is 0.
    const s = newSequence(0.05);
    for (let i = 0; i < 300; i++) {
      addDifference(s, rand() ** 3 - rand() ** 3);
      if (s.low > 0 || s.high < 0) {
        missed++;
        break;
      }
    }
  }
  assert.ok(missed <= 0.05 * RUNS, `${missed} of ${RUNS} runs excluded the true mean 0`);
});

Deno.test("a fixed-size t interval looked at after every pair errs far more than alpha (what the sequence prevents)", () => {
  // The control: the same simulation with the ordinary interval would fail the test above.
  const rand = seededRandom(20260101);
  let decided = 0;
  for (let run = 0; run < RUNS; run++) {
    let n = 0;
    let sum = 0;
    let squares = 0;
    for (let p = 0; p < 200; p++) {
      const d = (rand() < 0.5 ? 1 : 0) - (rand() < 0.5 ? 1 : 0);
      n++;
      sum += d;
      squares += d * d;
      if (n < 10) continue;
      const m = sum / n;
      const sd = Math.sqrt(Math.max(0, (squares - n * m * m) / (n - 1)));
      const half = tQuantile975(n - 1) * sd / Math.sqrt(n);
      if (sd > 0 && Math.abs(m) > half) {
        decided++;
        break;
      }
    }
  }
  assert.ok(decided > 2 * 0.05 * RUNS, `peeking at a t interval decided ${decided} of ${RUNS}`);
});

Deno.test("SequentialComparisons decides a large difference with at least 40% fewer cells than planned", () => {
  const rand = seededRandom(42);
  const pairs = 100;
  let cells = 0;
  let wrong = 0;
  let open = 0;
  for (let run = 0; run < RUNS; run++) {
    const { stop, cells: used } = simulate(0.9, 0.3, pairs, rand);
    cells += used;
    if (stop.status === "open") open++;
    else if (stop.higher !== true) wrong++;
  }
  const planned = 2 * pairs * RUNS;
  assert.equal(wrong, 0);
  assert.ok(open <= 0.01 * RUNS, `${open} runs did not decide`);
  assert.ok(cells <= 0.6 * planned, `used ${cells} of ${planned} planned cells`);
});

Deno.test("SequentialComparisons rarely decides a small difference the wrong way", () => {
  const rand = seededRandom(3);
  let wrong = 0;
  let right = 0;
  for (let run = 0; run < RUNS; run++) {
    const { stop } = simulate(0.55, 0.5, 300, rand);
    if (stop.status === "decided") stop.higher ? right++ : wrong++;
  }
  assert.ok(wrong <= 0.05 * RUNS / 2, `${wrong} runs decided the wrong way`);
  assert.ok(right >= wrong);
});

Deno.test("SequentialComparisons stops identical candidates as equivalent", () => {
  const seq = new SequentialComparisons(["cand", "base"], 1000, { ...RULE, delta: 0.1 });
  const rand = seededRandom(9);
  let p = 0;
  while (!seq.allStopped && p < 1000) {
    const r = rand() < 0.7 ? 1 : 0;
    seq.note(1, p, r);
    seq.note(0, p, r);
    p++;
  }
  const [c] = seq.comparisons();
  assert.equal(c.status, "equivalent");
  assert.ok(c.sequence[0] > -0.1 && c.sequence[1] < 0.1);
  assert.equal(c.meanDifference, 0);
  assert.ok(p < 1000);
});

Deno.test("SequentialComparisons concludes the same whatever order the cells settle in", () => {
  const names = ["a", "base", "b"];
  const pairs = 60;
  const rand = seededRandom(11);
  const rewards = Array.from({ length: pairs * names.length }, (_, i) => {
    const a = i % names.length;
    return rand() < [0.95, 0.2, 0.5][a] ? 1 : 0;
  });
  const once = (order: number[]) => {
    const seq = new SequentialComparisons(names, pairs, RULE);
    for (const i of order) seq.noteCell(i, rewards[i]);
    return seq.comparisons();
  };
  const inOrder = once(rewards.map((_, i) => i));
  const shuffled = rewards.map((_, i) => i).sort(() => rand() - 0.5);
  assert.deepEqual(once(shuffled), inOrder);
  assert.equal(inOrder[0].status, "decided");
  assert.equal(inOrder[0].higher, true);
});

Deno.test("SequentialComparisons holds a comparison at a pair without a verdict", () => {
  const seq = new SequentialComparisons(["cand", "base"], 50, RULE);
  // Pair 0 has no verdict of the candidate (a fault): later pairs wait for it.
  seq.note(1, 0, 0);
  for (let p = 1; p < 50; p++) {
    seq.note(0, p, 1);
    seq.note(1, p, 0);
  }
  assert.equal(seq.comparisons()[0].pairs, 0);
  assert.equal(seq.notNeeded(0), false);
  const stopped = seq.note(0, 0, 1);
  assert.equal(stopped.length, 1);
  assert.equal(stopped[0].status, "decided");
  assert.ok(stopped[0].pairs < 50);
  assert.equal(seq.notNeeded(0), true);
  // The baseline's cells are not needed once its only comparison has stopped.
  assert.equal(seq.notNeeded(1), true);
});

Deno.test("SequentialComparisons keeps the baseline needed while another comparison is open", () => {
  const seq = new SequentialComparisons(["a", "base", "b"], 40, RULE);
  for (let p = 0; p < 40; p++) {
    seq.note(0, p, 1);
    seq.note(1, p, 0);
  }
  assert.equal(seq.notNeeded(0), true);
  assert.equal(seq.notNeeded(1), false);
  assert.equal(seq.notNeeded(2), false);
});

Deno.test("sequenceStatus() decides outside 0, calls equivalence strictly inside ±delta", () => {
  assert.deepEqual(sequenceStatus([0.01, 0.5], 0.02), { status: "decided", higher: true });
  assert.deepEqual(sequenceStatus([-0.5, -0.01], 0.02), { status: "decided", higher: false });
  assert.deepEqual(sequenceStatus([-0.01, 0.01], 0.02), { status: "equivalent", higher: null });
  assert.deepEqual(sequenceStatus([-0.02, 0.01], 0.02), { status: "open", higher: null });
  assert.deepEqual(sequenceStatus([-0.0, 0.0], 0), { status: "open", higher: null });
});

Deno.test("addDifference() narrows monotonically and its mean is the differences' mean", () => {
  const s = newSequence(0.05);
  assert.equal(sequenceMean(s), null);
  let width = 2;
  for (const d of [1, 0, 1, 1, -1, 0.5, 1, 1]) {
    addDifference(s, d);
    assert.ok(s.high - s.low <= width + 1e-12);
    width = s.high - s.low;
  }
  assert.equal(sequenceMean(s), 4.5 / 8);
  assert.throws(() => addDifference(s, NaN), RangeError);
  assert.throws(() => newSequence(0), RangeError);
});
