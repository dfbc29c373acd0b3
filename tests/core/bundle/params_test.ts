import assert from "node:assert/strict";
import {
  paramRuleHelp,
  readParamFlag,
  readParamFlags,
  readParamTexts,
  readParamValue,
} from "../../../core/bundle/params.ts";
import { HELP as BENCHMARK_HELP } from "../../../cli/benchmark.ts";
import { HELP as CHECK_HELP } from "../../../cli/check.ts";
import { catalogBenchmark, catalogCheck } from "../../../core/ops/catalog_run.ts";

const CASES: [string, unknown][] = [
  ["nil", null],
  ["true", true],
  ["false", false],
  ["0", 0],
  ["3", 3],
  ["-12", -12],
  ["3.5", 3.5],
  ["-0.25", -0.25],
  ["1e3", 1000],
  ["007", "007"],
  ["+5", "+5"],
  ["00.5", "00.5"],
  ["the ops team", "the ops team"],
  ["nils", "nils"],
  ['"quoted"', "quoted"],
  [":kw", "kw"],
  ['["a" :b 2]', ["a", "b", 2]],
  ['{:k "v"}', { k: "v" }],
  ["", ""],
];

Deno.test("readParamValue() reads nil, booleans, numbers without + or leading zeros, EDN, else text", () => {
  for (const [text, value] of CASES) assert.deepEqual(readParamValue("x", text), value, text);
});

Deno.test("readParamFlag() and readParamTexts() give the same value for the same text", () => {
  for (const [text] of CASES) {
    const [name, flagValue] = readParamFlag(`x=${text}`, "check");
    assert.equal(name, "x");
    assert.deepEqual(readParamTexts({ x: text }).x, flagValue, text);
  }
});

Deno.test("readParamFlags() drops a leading colon, lets a later K win, and refuses K=V without K", () => {
  assert.deepEqual(readParamFlags([":flag=true", "n=1", "n=2"], "benchmark"), { flag: true, n: 2 });
  assert.throws(() => readParamFlag("novalue", "check"), /expected K=V/);
  assert.throws(() => readParamFlag("=3", "check"), /expected K=V/);
  assert.throws(() => readParamValue("tags", "[unclosed"), /Cannot use param tags=/);
});

Deno.test("check and benchmark --help and the MCP params schema state the one rule", () => {
  const rule = paramRuleHelp(0).split("\n");
  for (const help of [CHECK_HELP, BENCHMARK_HELP]) {
    for (const line of rule) assert.ok(help.includes(line), line);
  }
  for (const op of [catalogCheck, catalogBenchmark]) {
    const shape: Record<string, { description?: string }> = op.input.shape;
    const described = shape.params.description ?? "";
    assert.match(described, /no \+ and no leading zeros: 007 stays text/);
  }
});
