import assert from "node:assert/strict";
import {
  loadVerdictSchemas,
  readJudgeRequests,
  readVerdict,
  withVerdictSchemas,
} from "../../sandbox/verdict.ts";
import { describeValue } from "../../sandbox/verdict_schemas.ts";

// Every failure path below says what is wrong with the schemas' words (loaded on demand by
// the pools: withVerdictSchemas()).
const readsBeforeLoading = [
  readVerdict('{"checks":{"a":true},"reward":1}'),
  readJudgeRequests('[{"id":"q","prompt":"p","x":1}]'),
  readJudgeRequests("null"),
];
const wrongBeforeLoading = await withVerdictSchemas(() => readVerdict('{"checks":{},"reward":2}'));
await loadVerdictSchemas();

const MARK = "\u0000dvergr";
const mark = (what: string) => ({ [MARK]: what });

Deno.test("readVerdict() accepts checks and a reward in [0, 1] and drops extra keys", () => {
  const r = readVerdict(JSON.stringify({ checks: { a: true, b: false }, reward: 0.5, note: "x" }));
  assert.deepEqual(r, { ok: true, value: { checks: { a: true, b: false }, reward: 0.5 } });
});

Deno.test("readVerdict() accepts the bounds 0 and 1 and no checks at all", () => {
  assert.equal(readVerdict('{"checks":{},"reward":0}').ok, true);
  assert.equal(readVerdict('{"checks":{},"reward":1}').ok, true);
});

Deno.test("readVerdict() names the field, the expectation and the value it got", () => {
  const cases: [unknown, string][] = [
    [
      { checks: {}, reward: 2 },
      "The checker returned no verdict: reward: expected a number in [0, 1], got 2",
    ],
    [
      { checks: {}, reward: -1 },
      "The checker returned no verdict: reward: expected a number in [0, 1], got -1",
    ],
    [
      { checks: {}, reward: "1" },
      'The checker returned no verdict: reward: expected a number in [0, 1], got "1"',
    ],
    [
      { checks: {}, reward: mark("NaN") },
      "The checker returned no verdict: reward: expected a number in [0, 1], got NaN",
    ],
    [
      { checks: {} },
      "The checker returned no verdict: reward: expected a number in [0, 1], got nothing",
    ],
    [
      { checks: { a: 1 }, reward: 1 },
      "The checker returned no verdict: checks.a: expected true or false, got 1",
    ],
    [
      { checks: { a: mark("undefined") }, reward: 1 },
      "The checker returned no verdict: checks.a: expected true or false, got undefined",
    ],
    [
      { checks: [true], reward: 1 },
      "The checker returned no verdict: checks: expected an object of named booleans, got an array of 1",
    ],
    [
      mark("undefined"),
      "The checker returned no verdict: expected an object with `checks` and `reward`, got undefined",
    ],
    [
      null,
      "The checker returned no verdict: expected an object with `checks` and `reward`, got null",
    ],
  ];
  for (const [value, message] of cases) {
    assert.deepEqual(readVerdict(JSON.stringify(value)), { ok: false, message });
  }
});

Deno.test("readVerdict() keeps a check named __proto__ as a check without touching prototypes", () => {
  const r = readVerdict('{"checks":{"__proto__":true,"a":false},"reward":1}');
  assert.equal(r.ok, true);
  if (!r.ok) return;
  assert.deepEqual(Object.keys(r.value.checks).sort(), ["__proto__", "a"]);
  assert.equal(Object.getPrototypeOf(r.value.checks), Object.prototype);
  assert.equal(({} as Record<string, unknown>).a, undefined);
});

Deno.test("readJudgeRequests() reads {id, prompt} items and treats null as no request", () => {
  assert.deepEqual(readJudgeRequests('[{"id":"q1","prompt":"Is it polite?","extra":1}]'), {
    ok: true,
    value: [{ id: "q1", prompt: "Is it polite?" }],
  });
  assert.deepEqual(readJudgeRequests("null"), { ok: true, value: [] });
  assert.deepEqual(readJudgeRequests(JSON.stringify(mark("undefined"))), { ok: true, value: [] });
  assert.deepEqual(readJudgeRequests("[]"), { ok: true, value: [] });
});

Deno.test("readJudgeRequests() names the item and field at fault", () => {
  assert.deepEqual(readJudgeRequests('[{"id":"a","prompt":"p"},{"id":7,"prompt":"p"}]'), {
    ok: false,
    message: "judgeRequests returned no requests: 1.id: expected a string, got 7",
  });
  assert.deepEqual(readJudgeRequests('{"id":"a"}'), {
    ok: false,
    message:
      "judgeRequests returned no requests: expected an array of `{id, prompt}` (or null), got an object",
  });
});

Deno.test("describeValue() quotes strings and clips long values", () => {
  assert.equal(describeValue("1"), '"1"');
  assert.equal(describeValue(true), "true");
  assert.equal(describeValue({}), "an object");
  assert.equal(describeValue("x".repeat(100)).length, 58);
});

Deno.test("readers take well-formed results without the schemas, and load them to say what is wrong", () => {
  assert.deepEqual(readsBeforeLoading, [
    { ok: true, value: { checks: { a: true }, reward: 1 } },
    { ok: true, value: [{ id: "q", prompt: "p" }] },
    { ok: true, value: [] },
  ]);
  assert.deepEqual(wrongBeforeLoading, {
    ok: false,
    message: "The checker returned no verdict: reward: expected a number in [0, 1], got 2",
  });
});
