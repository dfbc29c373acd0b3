import assert from "node:assert/strict";
import {
  canonicalJson,
  contentHash,
  DEFAULT_BUDGET_MICROS,
  planExperiment,
  selectBundleCases,
} from "../../../core/bench/experiment.ts";
import type { Candidate } from "../../../core/bench/candidate.ts";
import { selectCases } from "../../../core/bench/shuffle.ts";
import { wordBundle } from "../../helpers/dataset_bundle.ts";
import { parseBundle } from "../../../core/bundle/parse.ts";
import { recallBundle } from "../../helpers/bundles.ts";
import { cellKey } from "../../../core/bench/records.ts";
import { seededRandom } from "../../../core/seeded_random.ts";

function cand(name: string, identity: Record<string, unknown> = { kind: "test", name }): Candidate {
  return { name, identity, run: () => Promise.reject(new Error("not run in these tests")) };
}

Deno.test("canonicalJson() sorts object keys at every level", () => {
  assert.equal(
    canonicalJson({ b: 1, a: { d: [3, { z: 1, y: 2 }], c: null } }),
    '{"a":{"c":null,"d":[3,{"y":2,"z":1}]},"b":1}',
  );
  assert.equal(contentHash({ a: 1, b: 2 }), contentHash({ b: 2, a: 1 }));
  assert.match(contentHash({}), /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
});

Deno.test("planExperiment() orders cells by repetition, case, candidate", () => {
  const plan = planExperiment(wordBundle(2), [cand("a"), cand("b")], { repetitions: 2 });
  assert.deepEqual([...plan.cells].map((c) => `${c.repetition}${c.caseId}${c.candidate}`), [
    "0c1a",
    "0c1b",
    "0c2a",
    "0c2b",
    "1c1a",
    "1c1b",
    "1c2a",
    "1c2b",
  ]);
  assert.equal(new Set([...plan.cells].map((c) => c.inputHash)).size, 8);
  assert.equal(plan.definition.timeoutMs, 20000);
  assert.equal(plan.definition.budgetMicros, DEFAULT_BUDGET_MICROS);
  assert.equal(plan.definition.task, "Write the word asked in /docs/q.txt to /out/answer.txt.");
});

Deno.test("planExperiment() gives the same id for the same definition and a new one for any change", () => {
  const bundle = wordBundle(3);
  const base = planExperiment(bundle, [cand("a", { kind: "x", p: 1, q: 2 })], { repetitions: 2 });
  const same = planExperiment(bundle, [cand("a", { q: 2, p: 1, kind: "x" })], { repetitions: 2 });
  assert.equal(base.id, same.id);
  const variants = [
    planExperiment(bundle, [cand("a", { kind: "x", p: 1, q: 3 })], { repetitions: 2 }),
    planExperiment(bundle, [cand("b", { kind: "x", p: 1, q: 2 })], { repetitions: 2 }),
    planExperiment(bundle, [cand("a", { kind: "x", p: 1, q: 2 })], { repetitions: 3 }),
    planExperiment(bundle, [cand("a", { kind: "x", p: 1, q: 2 })], { repetitions: 2, cases: 2 }),
    planExperiment(bundle, [cand("a", { kind: "x", p: 1, q: 2 })], {
      repetitions: 2,
      params: { explode: false },
    }),
    planExperiment(bundle, [cand("a", { kind: "x", p: 1, q: 2 })], {
      repetitions: 2,
      timeoutMs: 1000,
    }),
    planExperiment(bundle, [cand("a", { kind: "x", p: 1, q: 2 })], {
      repetitions: 2,
      budgetMicros: 1,
    }),
    planExperiment(wordBundle(3, { "checker.js": "export function check() {}" }), [
      cand("a", { kind: "x", p: 1, q: 2 }),
    ], { repetitions: 2 }),
  ];
  const ids = new Set([base.id, ...variants.map((v) => v.id)]);
  assert.equal(ids.size, variants.length + 1);
});

Deno.test("planExperiment() fills the task with the definition's params merged with the run's", () => {
  const files = recallBundle({
    "workflow.edn":
      '{:title "T" :task "Team {team}, limit {n}, keep {unknown}" :params {:team "ops" :n 3}}',
  });
  const bundle = parseBundle({ name: "recall", files });
  assert.equal(
    planExperiment(bundle, [cand("a")]).definition.task,
    "Team ops, limit 3, keep {unknown}",
  );
  const plan = planExperiment(bundle, [cand("a")], { params: { team: "platform" } });
  assert.equal(plan.definition.task, "Team platform, limit 3, keep {unknown}");
  assert.deepEqual([...plan.cells].map((c) => c.caseId), [null]);
});

Deno.test("selectBundleCases() takes --cases N from the fixed shuffle and --case-ids in bundle order", () => {
  const bundle = wordBundle(9);
  const ids = bundle.cases.map((c) => c.id);
  assert.deepEqual(selectBundleCases(bundle, { cases: 3 }), selectCases(ids, 3));
  assert.deepEqual(
    selectBundleCases(bundle, { cases: 3 }),
    selectBundleCases(bundle, { cases: 3 }),
  );
  assert.deepEqual(selectBundleCases(bundle, { cases: 100 }), ids);
  assert.deepEqual(selectBundleCases(bundle, { caseIds: ["c7", "c2"] }), ["c2", "c7"]);
  assert.deepEqual(selectBundleCases(bundle, {}), ids);
  assert.throws(
    () => selectBundleCases(bundle, { caseIds: ["c2", "x", "y"] }),
    /Cannot select cases "x", "y"/,
  );
  assert.throws(() => selectBundleCases(bundle, { cases: 2, caseIds: ["c1"] }), /together/);
  const single = parseBundle({ name: "recall", files: recallBundle() });
  assert.equal(selectBundleCases(single, { cases: 3 }), null);
  assert.throws(() => selectBundleCases(single, { caseIds: ["a"] }), /has no cases/);
  assert.throws(() => planExperiment(single, [cand("a")], { repetitions: 0 }), /from 1 to/);
});

Deno.test("planExperiment() hashes each cell's inputs as contentHash() of them, so old records resume", () => {
  const bundle = wordBundle(3);
  const identity = { kind: "command", z: { b: [1, { y: 2, x: 'é"' }], a: null }, name: "a" };
  const plan = planExperiment(bundle, [cand("a", identity), cand("b")], { repetitions: 2 });
  for (const c of plan.cells) {
    const expected = contentHash({
      experiment: plan.id,
      candidate: plan.definition.candidates.find((x) => x.name === c.candidate)!.identity,
      caseId: c.caseId,
      repetition: c.repetition,
    });
    assert.equal(c.inputHash, expected);
  }
  // Hashes made before parts were assembled by hand (commit 67e48a8).
  assert.equal(contentHash({ a: 1 }), "015abd7f-5cc5-7a2d-d94b-7590f04ad808");
});

Deno.test("planExperiment() computes from its index exactly the cells an eager plan listed", () => {
  const r = seededRandom(7);
  for (let n = 0; n < 25; n++) {
    const bundle = wordBundle(1 + Math.floor(r() * 6));
    const candidates = Array.from(
      { length: 1 + Math.floor(r() * 4) },
      (_, i) => cand(`c${i}`, { kind: "test", n: i, seed: r() }),
    );
    const cases = r() < 0.5 ? 1 + Math.floor(r() * bundle.cases.length) : undefined;
    const plan = planExperiment(bundle, candidates, {
      repetitions: 1 + Math.floor(r() * 3),
      ...(cases ? { cases } : {}),
    });
    // The plan as it was listed up front: repetition, then case, then candidate.
    const eager = [];
    for (let repetition = 0; repetition < plan.definition.repetitions; repetition++) {
      for (const caseId of plan.definition.cases ?? [null]) {
        for (const c of candidates) {
          eager.push({
            candidate: c.name,
            caseId,
            repetition,
            key: cellKey(c.name, caseId, repetition),
            inputHash: contentHash({
              experiment: plan.id,
              candidate: c.identity,
              caseId,
              repetition,
            }),
          });
        }
      }
    }
    assert.equal(plan.cells.length, eager.length);
    assert.deepEqual([...plan.cells], eager);
    eager.forEach((c, i) => {
      assert.deepEqual(plan.cells.at(i), c);
      assert.equal(plan.cells.inputHashAt(i), c.inputHash);
      assert.equal(plan.cells.candidateAt(i), c.candidate);
      assert.equal(plan.cells.indexOf(c.candidate, c.caseId, c.repetition), i);
    });
    assert.throws(() => plan.cells.at(eager.length), RangeError);
    assert.throws(() => plan.cells.at(-1), RangeError);
    assert.equal(plan.cells.indexOf("c0", "c1", plan.definition.repetitions), -1);
  }
});
