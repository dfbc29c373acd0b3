import assert from "node:assert/strict";
import { cellsCsv } from "../../../core/bench/cells_csv.ts";
import type { ExperimentDefinition } from "../../../core/bench/experiment.ts";
import { attemptRecord } from "../../helpers/records.ts";

const DEF: ExperimentDefinition = {
  format: "dvergr-experiment/1",
  bundle: "b",
  candidates: [{ name: "a", identity: {} }, { name: "b,c", identity: {} }],
  cases: ["B0001", "B0002"],
  repetitions: 1,
  params: {},
  task: "t",
  timeoutMs: 1000,
  budgetMicros: 0,
};

/** A CSV text's rows as fields (RFC 4180 quotes undone). */
function parse(csv: string): string[][] {
  const rows: string[][] = [];
  for (const line of csv.split("\r\n").slice(0, -1)) {
    const fields: string[] = [];
    for (const m of line.matchAll(/("(?:[^"]|"")*"|[^,]*)(,|$)/g)) {
      const f = m[1];
      fields.push(f.startsWith('"') ? f.slice(1, -1).replaceAll('""', '"') : f);
      if (m[2] === "") break;
    }
    rows.push(fields);
  }
  return rows;
}

Deno.test("cellsCsv() writes one row per planned cell, in plan order, with every check", () => {
  const csv = cellsCsv(DEF, [
    attemptRecord({
      candidate: "b,c",
      caseId: "B0001",
      billedMicros: 1_234_567,
      usage: { input: 10, output: 2, cacheRead: 1, cacheWrite: 0 },
    }),
    attemptRecord({
      candidate: "a",
      caseId: "B0002",
      passed: false,
      verdict: { checks: { ok: true, 'quote"d': false }, reward: 0.5 },
    }),
  ]);
  assert.ok(csv.endsWith("\r\n"));
  const rows = parse(csv);
  const header = rows[0];
  assert.deepEqual(header.slice(0, 8), [
    "candidate",
    "case",
    "repetition",
    "try",
    "outcome",
    "passed",
    "reward",
    "cause",
  ]);
  assert.deepEqual(header.slice(-2), ["check:ok", 'check:quote"d']);
  assert.ok(rows.every((r) => r.length === header.length), JSON.stringify(rows));
  const col = (row: string[], name: string) => row[header.indexOf(name)];
  assert.deepEqual(rows.slice(1).map((r) => [r[0], r[1], col(r, "outcome")]), [
    ["a", "B0001", "not run"],
    ["b,c", "B0001", "passed"],
    ["a", "B0002", "failed"],
    ["b,c", "B0002", "not run"],
  ]);
  assert.equal(col(rows[2], "billed_dollars"), "1.234567");
  assert.equal(col(rows[2], "input_tokens"), "10");
  assert.equal(col(rows[2], 'check:quote"d'), "");
  assert.equal(col(rows[3], "reward"), "0.5");
  assert.equal(col(rows[3], "cause"), 'checks failed: :quote"d');
  assert.equal(col(rows[3], 'check:quote"d'), "false");
  assert.equal(col(rows[1], "try"), "");
});

Deno.test("cellsCsv() keeps a cause that looks like a formula as text and leaves unknown costs empty", () => {
  const rows = parse(cellsCsv(DEF, [
    attemptRecord({
      candidate: "a",
      caseId: "B0001",
      status: "timeout",
      passed: false,
      unpriced: true,
      ending: { message: "=cmd|' /C calc'!A0", exitCode: null, signal: null, stderrTail: null },
    }),
  ]));
  const header = rows[0];
  const row = rows[1];
  assert.equal(row[header.indexOf("outcome")], "timed-out");
  assert.equal(row[header.indexOf("cause")], "'=cmd|' /C calc'!A0");
  assert.equal(row[header.indexOf("billed_dollars")], "");
  assert.equal(row[header.indexOf("list_dollars")], "");
});
