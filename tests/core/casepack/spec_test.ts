import assert from "node:assert/strict";
import {
  checkSpecColumns,
  completeSpec,
  parseColumnList,
  parseOutcome,
  type SpecDraft,
  specFromEdn,
} from "../../../core/casepack/spec.ts";
import { parseTable } from "../../../core/casepack/table.ts";
import { DvergrError } from "../../../core/errors.ts";

function specError(fn: () => unknown): DvergrError {
  try {
    fn();
  } catch (e) {
    assert.ok(e instanceof DvergrError, String(e));
    assert.ok(e.hint, "every spec error has a hint");
    return e;
  }
  throw new assert.AssertionError({ message: "expected a DvergrError" });
}

Deno.test("parseOutcome() reads column:rule[:tolerance], the rule found from the right", () => {
  assert.deepEqual(parseOutcome("account:exact"), { field: "account", rule: "exact" });
  assert.deepEqual(parseOutcome("Amount:NUMBER:0,01"), {
    field: "Amount",
    rule: "number",
    tolerance: 0.01,
  });
  assert.deepEqual(parseOutcome("Konto:Soll:ci"), { field: "Konto:Soll", rule: "ci" });
  assert.deepEqual(parseOutcome("Due Date:date"), { field: "Due Date", rule: "date" });
  assert.deepEqual(parseOutcome("t:number:5"), { field: "t", rule: "number", tolerance: 5 });
});

Deno.test("parseOutcome() refuses a missing or unknown rule and a misplaced tolerance", () => {
  for (
    const bad of ["account", "account:fuzzy", ":exact", "a:number:x", "a:number:-1", "a:set:1"]
  ) {
    const e = specError(() => parseOutcome(bad));
    assert.equal(e.code, "SPEC_INVALID", bad);
    assert.ok(e.message.includes(`--outcome "${bad}"`), e.message);
  }
});

Deno.test("parseColumnList() splits on commas and trims", () => {
  assert.deepEqual(parseColumnList(" Datum, Betrag ,,Buchungstext "), [
    "Datum",
    "Betrag",
    "Buchungstext",
  ]);
});

Deno.test("specFromEdn() reads every key of docs/compatibility.md §6.3 in order", () => {
  const d = specFromEdn(
    `{:name "invoice-coding" :title "Invoice coding" :doc "D"
      :id "invoice_no" :inputs ["vendor" :text] :attachments ["document"]
      :expected {"account" {:rule :exact :doc "the SKR04 account"}
                 "amount" {:rule :number :tolerance 0.01}
                 "tags" {:rule :set} "vendor_name" :ci "due" {:rule "date"} "plain" {}}
      :task "T" :shared {"/docs/accounts.txt" "6815 Bürobedarf"}}`,
    "spec.edn",
  );
  assert.equal(d.name, "invoice-coding");
  assert.deepEqual(d.inputs, ["vendor", "text"]);
  assert.deepEqual(d.expected, [
    { field: "account", rule: "exact", doc: "the SKR04 account" },
    { field: "amount", rule: "number", tolerance: 0.01 },
    { field: "tags", rule: "set" },
    { field: "vendor_name", rule: "ci" },
    { field: "due", rule: "date" },
    { field: "plain", rule: "exact" },
  ]);
  assert.deepEqual([...d.shared!], [["/docs/accounts.txt", "6815 Bürobedarf"]]);
  assert.equal(d.origin?.expected, "spec.edn :expected");
});

Deno.test("specFromEdn() names the file and key of a bad spec", () => {
  const cases: [string, RegExp][] = [
    ["[1 2]", /"s\.edn": it is a vector, expected a map/],
    ['{:id "x" :expect {}}', /unknown key :expect/],
    ['{:inputs "a,b"}', /:inputs is a string, expected a vector/],
    ['{:expected {"a" {:rule :fuzzy}}}', /:expected "a" has the rule "fuzzy", unknown/],
    [
      '{:expected {"a" {:rule :exact :tolerance 1}}}',
      /tolerance, which applies to the number rule/,
    ],
    ['{:expected {"a" {:rule :number :tolerance "x"}}}', /:tolerance is a string/],
    ['{:shared {"/docs/a" 1}}', /:shared holds an entry that is not a path string/],
  ];
  for (const [text, re] of cases) {
    const e = specError(() => specFromEdn(text, "s.edn"));
    assert.equal(e.code, "SPEC_INVALID", text);
    assert.match(e.message, re);
  }
  const syntax = (() => {
    try {
      specFromEdn('{:id "x"', "s.edn");
    } catch (e) {
      return e as DvergrError;
    }
  })();
  assert.equal(syntax?.code, "EDN_SYNTAX");
  assert.match(syntax!.message, /s\.edn line 1/);
});

const draft = (extra: SpecDraft = {}): SpecDraft => ({
  name: "t",
  id: "no",
  inputs: ["text"],
  expected: [{ field: "k", rule: "exact" }],
  ...extra,
});

Deno.test("completeSpec() refuses a spec that could not grade anything", () => {
  const cases: [SpecDraft, RegExp][] = [
    [draft({ id: " " }), /no column names a case/],
    [draft({ inputs: [] }), /no input columns/],
    [draft({ expected: [] }), /expects no outcome/],
    [draft({ inputs: ["a", "a"] }), /column "a" is named twice/],
    [draft({ inputs: ["k"] }), /"k" is both an input and an expected outcome/],
    [
      draft({
        expected: [{ field: "Due Date", rule: "date" }, { field: "due_date", rule: "date" }],
      }),
      /"Due Date" and "due_date" share the check name "due-date"/,
    ],
    [draft({ expected: [{ field: "Answer Present", rule: "ci" }] }), /check name "answer-present"/],
    [draft({ shared: new Map([["../x", "t"]]) }), /shared file "\.\.\/x"/],
    [draft({ shared: new Map([["/docs/case.edn", "t"]]) }), /\/docs\/case\.edn/],
  ];
  for (const [d, re] of cases) {
    const e = specError(() => completeSpec(d));
    assert.equal(e.code, "SPEC_INVALID");
    assert.match(e.message, re);
  }
});

Deno.test("completeSpec() trims column names and adds a leading / to shared paths", () => {
  const s = completeSpec(
    draft({ inputs: [" text "], shared: new Map([["docs/a.txt", "A"]]), task: "  " }),
  );
  assert.deepEqual(s.inputs, ["text"]);
  assert.deepEqual([...s.shared], [["/docs/a.txt", "A"]]);
  assert.equal(s.task, undefined);
  assert.deepEqual(s.attachments, []);
});

Deno.test("checkSpecColumns() names a missing column, where it came from, and a near match", () => {
  const table = parseTable("No;Text;K\n1;x;y\n", { file: "t.csv", format: "csv" });
  const spec = completeSpec(draft({ id: "no", origin: { id: "--id" } }));
  const e = specError(() => checkSpecColumns(spec, table));
  assert.equal(e.message, 'Cannot build the case pack: column "no" (--id) is not in "t.csv"');
  assert.equal(e.hint, 'Did you mean "No"? The table\'s columns are: "No", "Text", "K"');
  checkSpecColumns(
    completeSpec(draft({ id: "No", inputs: ["Text"], expected: [{ field: "K", rule: "ci" }] })),
    table,
  );
});
