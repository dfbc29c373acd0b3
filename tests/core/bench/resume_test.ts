import assert from "node:assert/strict";
import { type AttemptRecord, cellKey } from "../../../core/bench/records.ts";
import type { ExperimentPlan } from "../../../core/bench/experiment.ts";
import { planExperiment } from "../../../core/bench/experiment.ts";
import {
  candidatesToRun,
  cellCounts,
  cellIndexer,
  keeps,
  readCellStates,
  resumeState,
} from "../../../core/bench/resume.ts";
import { builtinCandidate } from "../../../core/io/candidates/builtin.ts";
import { wordBundle } from "../../helpers/dataset_bundle.ts";
import { attemptRecord } from "../../helpers/records.ts";
import { seededRandom } from "../../../core/seeded_random.ts";

/** How resume was decided when every latest record was held (the code before CellStates). */
function resumeFromRecords(plan: ExperimentPlan, records: AttemptRecord[], retries: number) {
  const latest = new Map<string, AttemptRecord>();
  for (const r of records) {
    const key = cellKey(r.candidate, r.caseId, r.repetition);
    const seen = latest.get(key);
    if (!seen || r.tryNo >= seen.tryNo) latest.set(key, r);
  }
  const pending = [];
  const faulted = new Set<string>();
  let kept = 0;
  let graded = 0;
  let faults = 0;
  for (const cell of plan.cells) {
    const r = latest.get(cell.key);
    if (r && r.inputHash === cell.inputHash) r.verdict ? graded++ : faults++;
    if (keeps(cell, r)) kept++;
    else {
      if (r && !r.verdict) faulted.add(cell.key);
      pending.push({ cell, tryNo: (r?.tryNo ?? 0) + 1, retriesLeft: retries });
    }
  }
  return { resume: { kept, faulted, pending }, counts: { graded, faults } };
}

const bundle = wordBundle(5);
const candidates = [builtinCandidate("reference", bundle), builtinCandidate("noop", bundle)];
const plan = planExperiment(bundle, candidates, { repetitions: 3 });

/** Latest records of random cells: kept, faulted, made with other inputs, of unplanned cells. */
function randomLatest(seed: number): AttemptRecord[] {
  const r = seededRandom(seed);
  const out: AttemptRecord[] = [];
  for (const cell of plan.cells) {
    const kind = Math.floor(r() * 6);
    if (kind === 0) continue;
    const tries = 1 + Math.floor(r() * 2);
    for (let t = 0; t < tries; t++) {
      out.push(attemptRecord({
        experimentId: plan.id,
        candidate: cell.candidate,
        caseId: cell.caseId,
        repetition: cell.repetition,
        tryNo: 1 + Math.floor(r() * 4),
        inputHash: kind === 4 ? "other-inputs" : cell.inputHash,
        ...(kind === 2 || kind === 4 && r() < 0.5
          ? { verdict: null, passed: false, fault: { source: "host", kind: "x", message: "m" } }
          : {}),
      }));
    }
  }
  // Records of cells the plan does not have.
  out.push(attemptRecord({ candidate: "builtin:reference", caseId: "zz", repetition: 0 }));
  out.push(attemptRecord({ candidate: "ghost", caseId: "c1", repetition: 0 }));
  out.push(attemptRecord({ candidate: "builtin:noop", caseId: "c1", repetition: 9 }));
  return out;
}

Deno.test("resumeState() from CellStates decides the same cells as from the held records", async () => {
  for (let seed = 1; seed <= 60; seed++) {
    const records = randomLatest(seed);
    const states = await readCellStates(plan, records);
    for (const retries of [0, 1]) {
      const before = resumeFromRecords(plan, records, retries);
      const now = resumeState(plan, states, retries);
      assert.deepEqual(now, before.resume, `seed ${seed}`);
      assert.deepEqual(cellCounts(states), before.counts, `seed ${seed}`);
      assert.deepEqual(candidatesToRun(now), candidatesToRun(before.resume));
    }
  }
});

Deno.test("readCellStates() reads a stream of records a few bytes per cell", async () => {
  async function* stream() {
    yield* randomLatest(3);
  }
  const states = await readCellStates(plan, stream());
  assert.equal(states.state.length, plan.cells.length);
  assert.deepEqual(states, await readCellStates(plan, randomLatest(3)));
});

Deno.test("cellIndexer() finds each planned cell by its place, and -1 for cells not planned", () => {
  const index = cellIndexer(plan);
  plan.cells.forEach((c, i) => assert.equal(index(c.candidate, c.caseId, c.repetition), i));
  assert.equal(index("builtin:noop", "c1", 3), -1);
  assert.equal(index("builtin:noop", "nope", 0), -1);
  assert.equal(index("ghost", "c1", 0), -1);
  assert.equal(index("builtin:noop", "c1", 0.5), -1);
  // A plan whose cells are in another order is looked up by key.
  const reversed = { ...plan, cells: [...plan.cells].reverse() };
  const byKey = cellIndexer(reversed);
  reversed.cells.forEach((c, i) => assert.equal(byKey(c.candidate, c.caseId, c.repetition), i));
  assert.equal(byKey("builtin:noop", "c1", 3), -1);
});
