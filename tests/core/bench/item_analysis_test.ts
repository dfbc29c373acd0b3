import assert from "node:assert/strict";
import { attemptRecord as record } from "../../helpers/records.ts";
import { caseResults } from "../../../core/bench/case_results.ts";
import {
  itemAnalysis,
  itemSentence,
  itemSummaryLine,
  pearson,
} from "../../../core/bench/item_analysis.ts";
import type { AttemptRecord } from "../../../core/bench/records.ts";

/** A graded attempt of `candidate` on `caseId` that passed or failed. */
function graded(candidate: string, caseId: string, passed: boolean, repetition = 0): AttemptRecord {
  return record({
    candidate,
    caseId,
    repetition,
    passed,
    verdict: { checks: { ok: passed }, reward: passed ? 1 : 0 },
  });
}

/**
 * strong passes c1–c4, middle c1–c3, weak c1; nobody passes "broken"; everyone passes c1
 * (saturated); "odd" is passed by weak only (anti-correlated).
 */
function planted(): AttemptRecord[] {
  const pass: Record<string, string[]> = {
    strong: ["c1", "c2", "c3", "c4"],
    middle: ["c1", "c2", "c3"],
    weak: ["c1", "odd"],
  };
  const cases = CASES;
  return Object.entries(pass).flatMap(([cand, ok]) =>
    cases.map((c) => graded(cand, c, ok.includes(c)))
  );
}

const CANDS = ["strong", "middle", "weak"];
const CASES = ["c1", "c2", "c3", "c4", "broken", "odd"];

Deno.test("pearson() is 1, -1, or null without variance", () => {
  assert.equal(pearson([1, 2, 3], [2, 4, 6]), 1);
  assert.equal(pearson([1, 2, 3], [3, 2, 1]), -1);
  assert.equal(pearson([1, 1, 1], [1, 2, 3]), null);
  assert.equal(pearson([1], [1]), null);
});

Deno.test("caseResults() gives each candidate's mean reward and passes per case", () => {
  const res = caseResults(
    [graded("a", "c1", true, 0), graded("a", "c1", false, 1), graded("b", "c1", true)],
    ["a", "b"],
    ["c1", "c2"],
  );
  assert.deepEqual(res[0].cells[0], {
    candidate: "a",
    reward: 0.5,
    passes: 1,
    graded: 2,
    faults: 0,
  });
  assert.deepEqual(res[0].cells[1], { candidate: "b", reward: 1, passes: 1, graded: 1, faults: 0 });
  assert.deepEqual(res[1].cells[0], {
    candidate: "a",
    reward: null,
    passes: 0,
    graded: 0,
    faults: 0,
  });
});

Deno.test("itemAnalysis() flags a broken, a saturated and an anti-correlated case", () => {
  const items = itemAnalysis(caseResults(planted(), CANDS, CASES));
  const by = Object.fromEntries(items.map((i) => [i.caseId, i]));
  assert.equal(by.broken.flag, "broken");
  assert.equal(by.broken.passRate, 0);
  assert.equal(by.c1.flag, "saturated");
  assert.equal(by.c1.passRate, 1);
  assert.equal(by.odd.flag, "anti-correlated");
  assert.ok(by.odd.discrimination! < -0.9, String(by.odd.discrimination));
  for (const c of ["c2", "c3", "c4"]) {
    assert.ok(by[c].discrimination! > 0.4, `${c} ${by[c].discrimination}`);
  }
  for (const c of ["c2", "c3", "c4"]) assert.equal(by[c].flag, null);
  assert.match(itemSentence(by.broken), /no candidate passed it .* may be broken/);
  assert.match(itemSentence(by.c1), /saturated/);
  assert.match(itemSentence(by.odd), /stronger candidates fail it more often/);
});

Deno.test("itemAnalysis() flags no case broken when no candidate passes anything", () => {
  const records = CASES.map((c) => graded("noop", c, false));
  const items = itemAnalysis(caseResults(records, ["noop"], CASES));
  assert.ok(items.every((i) => i.flag === null));
  assert.ok(items.every((i) => i.discrimination === null)); // one candidate: no correlation
});

Deno.test("itemAnalysis() does not call a case saturated on one candidate's word", () => {
  const items = itemAnalysis(caseResults([graded("ref", "c1", true)], ["ref"], ["c1"]));
  assert.equal(items[0].flag, null);
});

Deno.test("itemSummaryLine() names the flagged cases by kind, or is null", () => {
  const items = itemAnalysis(caseResults(planted(), CANDS, CASES));
  assert.equal(
    itemSummaryLine(items),
    "Item analysis: 1 case possibly broken (no candidate passes): broken; " +
      "1 case saturated (every candidate passes): c1; " +
      "1 case anti-correlated (stronger candidates fail more): odd (the report says more)",
  );
  assert.equal(itemSummaryLine(items.filter((i) => i.flag === null)), null);
});
