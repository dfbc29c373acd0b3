import assert from "node:assert/strict";
import { type AttemptRecord, cellKey } from "../../../core/bench/records.ts";
import type { ExperimentPlan } from "../../../core/bench/experiment.ts";
import { planExperiment } from "../../../core/bench/experiment.ts";
import {
  candidatesToRun,
  cellCounts,
  cellIndexer,
  keeps,
  type PendingCell,
  readCellStates,
  resumeState,
} from "../../../core/bench/resume.ts";
import { PendingQueue } from "../../../core/bench/pending_queue.ts";
import { builtinCandidate } from "../../../adapters/candidates/builtin/builtin.ts";
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
  for (const [index, cell] of [...plan.cells].entries()) {
    const r = latest.get(cell.key);
    if (r && r.inputHash === cell.inputHash) r.verdict ? graded++ : faults++;
    if (keeps(cell, r)) kept++;
    else {
      if (r && !r.verdict) faulted.add(cell.key);
      pending.push({ index, cell, tryNo: (r?.tryNo ?? 0) + 1, retriesLeft: retries });
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

Deno.test("resumeState() and PendingQueue from CellStates decide the same cells as from the held records", async () => {
  for (let seed = 1; seed <= 60; seed++) {
    const records = randomLatest(seed);
    const states = await readCellStates(plan, records);
    for (const retries of [0, 1]) {
      const before = resumeFromRecords(plan, records, retries);
      const now = resumeState(plan, states);
      assert.equal(now.kept, before.resume.kept, `seed ${seed}`);
      assert.equal(now.toRun, before.resume.pending.length, `seed ${seed}`);
      const faulted = [...plan.cells].filter((_, i) => now.faulted[i] === 1).map((c) => c.key);
      assert.deepEqual(new Set(faulted), before.resume.faulted, `seed ${seed}`);
      assert.equal(now.faults, faulted.length);
      const queue = new PendingQueue(plan, states, retries);
      assert.equal(queue.length, before.resume.pending.length);
      const taken = [];
      for (let n = 1; queue.length > 0; n = (n % 3) + 1) taken.push(...queue.take(n));
      assert.deepEqual(taken, before.resume.pending, `seed ${seed}`);
      assert.deepEqual(queue.take(5), []);
      assert.deepEqual(cellCounts(states), before.counts, `seed ${seed}`);
      assert.deepEqual(
        candidatesToRun(plan, states),
        new Set(before.resume.pending.map((p) => p.cell.candidate)),
      );
    }
  }
});

Deno.test("PendingQueue take/unshift/push/rotate keep the order an array of every pending cell had", async () => {
  for (let seed = 1; seed <= 40; seed++) {
    const r = seededRandom(seed);
    const states = await readCellStates(plan, randomLatest(seed));
    const queue = new PendingQueue(plan, states, 1);
    const model: PendingCell[] = resumeFromRecords(plan, randomLatest(seed), 1).resume.pending;
    for (let step = 0; step < 200 && (model.length > 0 || step < 5); step++) {
      const op = Math.floor(r() * 4);
      if (op === 0) {
        const n = Math.floor(r() * 4);
        assert.deepEqual(queue.take(n), model.splice(0, n), `seed ${seed} step ${step}`);
      } else if (op === 1) {
        const items = queue.take(Math.floor(r() * 3));
        queue.unshift(items);
      } else if (op === 2 && model.length > 0) {
        const [item] = queue.take(1);
        model.shift();
        queue.push(item);
        model.push(item);
      } else {
        // Rotation moves a front part to the end, cut at a fraction of the queue's span.
        queue.rotate(r());
        const all = queue.take(queue.length);
        const k = model.findIndex((p) => p.index === all[0]?.index);
        assert.deepEqual(
          all,
          [...model.slice(k), ...model.slice(0, k)],
          `seed ${seed} step ${step}`,
        );
        model.splice(0, model.length, ...all);
        for (const p of all) queue.push(p);
      }
      assert.equal(queue.length, model.length);
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
  [...plan.cells].forEach((c, i) => assert.equal(index(c.candidate, c.caseId, c.repetition), i));
  assert.equal(index("builtin:noop", "c1", 3), -1);
  assert.equal(index("builtin:noop", "nope", 0), -1);
  assert.equal(index("ghost", "c1", 0), -1);
  assert.equal(index("builtin:noop", "c1", 0.5), -1);
});
