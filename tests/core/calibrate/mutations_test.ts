import assert from "node:assert/strict";
import { parseBundle } from "../../../core/bundle/parse.ts";
import { type PlannedMutation, referenceMutations } from "../../../core/calibrate/mutations.ts";
import { readEdn } from "../../../core/edn/read.ts";
import { toPlain } from "../../../core/edn/plain.ts";
import { recallBundle } from "../../helpers/bundles.ts";
import { wordDataset } from "../../helpers/dataset_bundle.ts";

const ORDER = [
  "no-answer",
  "empty-answer",
  "task-as-answer",
  "cut-in-half",
  "values-swapped",
  "numbers-plus-one",
  "numbers-minus-one",
  "numbers-times-ten",
  "numbers-negated",
  "one-char-changed",
  "entry-dropped",
  "entry-duplicated",
  "other-case",
  "whitespace",
  "key-order",
  "trailing-newline",
  "integer-as-float",
  "vectors-as-lists",
];

const ANSWER = '{:name "Wato" :total 12 :price 2.5 :items ["ab" "cd"]}';

function ednBundle(answer = ANSWER) {
  return parseBundle({
    name: "edn",
    files: recallBundle({
      "calibration.edn": `{:reference {"/out/answer.edn" ${JSON.stringify(answer)}}}`,
    }),
  });
}

function byName(ms: PlannedMutation[]): Record<string, PlannedMutation> {
  return Object.fromEntries(ms.map((m) => [m.name, m]));
}

function answerOf(m: PlannedMutation, path = "/out/answer.edn"): string | undefined {
  assert.ok(m.applies, `${m.name} applies`);
  return m.files[path];
}

Deno.test("referenceMutations() lists every mutation in a fixed order, damaging ones first", () => {
  const ms = referenceMutations(ednBundle());
  assert.deepEqual(ms.map((m) => m.name), ORDER);
  const kinds = ms.map((m) => m.kind);
  assert.equal(kinds.lastIndexOf("damaging") + 1, kinds.indexOf("invariance"));
  assert.deepEqual(referenceMutations(ednBundle()), ms, "deterministic");
});

Deno.test("referenceMutations() damages an EDN answer as data, every place of a kind at once", () => {
  const m = byName(referenceMutations(ednBundle()));
  assert.deepEqual((m["no-answer"] as { files: unknown }).files, {});
  assert.equal(answerOf(m["empty-answer"]), "");
  assert.equal(answerOf(m["task-as-answer"]), "List the names in /docs/a.md in /out/list.md.");
  assert.equal(answerOf(m["cut-in-half"]), ANSWER.slice(0, Math.floor(ANSWER.length / 2)));
  assert.equal(
    answerOf(m["values-swapped"]),
    '{:name 12, :total "Wato", :price 2.5, :items ["ab" "cd"]}',
  );
  assert.equal(
    answerOf(m["numbers-plus-one"]),
    '{:name "Wato", :total 13, :price 3.5, :items ["ab" "cd"]}',
  );
  assert.equal(
    answerOf(m["numbers-minus-one"]),
    '{:name "Wato", :total 11, :price 1.5, :items ["ab" "cd"]}',
  );
  assert.equal(
    answerOf(m["numbers-times-ten"]),
    '{:name "Wato", :total 120, :price 25, :items ["ab" "cd"]}',
  );
  assert.equal(
    answerOf(m["numbers-negated"]),
    '{:name "Wato", :total -12, :price -2.5, :items ["ab" "cd"]}',
  );
  assert.equal(
    answerOf(m["one-char-changed"]),
    '{:name "Wauo", :total 12, :price 2.5, :items ["ac" "ce"]}',
  );
  assert.equal(
    answerOf(m["entry-dropped"]),
    '{:name "Wato", :total 12, :price 2.5, :items ["ab"]}',
  );
  assert.equal(
    answerOf(m["entry-duplicated"]),
    '{:name "Wato", :total 12, :price 2.5, :items ["ab" "cd" "cd"]}',
  );
  assert.equal(m["other-case"].applies, false);
  for (const name of ORDER.slice(1, 12)) {
    const text = answerOf(m[name]);
    let changed = true;
    try {
      changed =
        JSON.stringify(toPlain(readEdn(text!))) !== JSON.stringify(toPlain(readEdn(ANSWER)));
    } catch {
      // Unreadable is changed.
    }
    assert.ok(changed, `${name} changes the data`);
  }
});

Deno.test("referenceMutations() keeps the data of an EDN answer under every invariance", () => {
  const m = byName(referenceMutations(ednBundle()));
  assert.equal(
    answerOf(m["key-order"]),
    '{:items ["ab" "cd"], :price 2.5, :total 12, :name "Wato"}',
  );
  assert.equal(
    answerOf(m["integer-as-float"]),
    '{:name "Wato", :total 12.0, :price 2.5, :items ["ab" "cd"]}',
  );
  assert.equal(
    answerOf(m["vectors-as-lists"]),
    '{:name "Wato", :total 12, :price 2.5, :items ("ab" "cd")}',
  );
  assert.equal(answerOf(m["trailing-newline"]), ANSWER + "\n");
  assert.equal(
    answerOf(m.whitespace),
    '{\n  :name  "Wato"\n  :total  12\n  :price  2.5\n  :items  [\n    "ab"\n    "cd"\n  ]\n}',
  );
  const plain = (t: string) => toPlain(readEdn(t));
  for (const name of ORDER.slice(13)) {
    assert.deepEqual(plain(answerOf(m[name])!), plain(ANSWER), name);
  }
});

Deno.test("referenceMutations() names why a mutation does not apply instead of inventing one", () => {
  const m = byName(referenceMutations(ednBundle('{:a "x"}')));
  assert.deepEqual(
    Object.fromEntries(
      Object.values(m).flatMap((x) => (x.applies ? [] : [[x.name, x.reason]])),
    ),
    {
      "values-swapped":
        "the answer has no map with two different values (maps are read from EDN answers only)",
      "numbers-plus-one": "the answer has no numbers",
      "numbers-minus-one": "the answer has no numbers",
      "numbers-times-ten": "the answer has no numbers",
      "numbers-negated": "the answer has no numbers (other than 0)",
      "entry-dropped": "the answer has no list (EDN) or fewer than two lines (text)",
      "entry-duplicated": "the answer has no vector or list (EDN) or fewer than two lines (text)",
      "other-case": "the bundle is not a dataset (it has no cases)",
      "key-order": "the answer has no map with two keys (maps are read from EDN answers only)",
      "integer-as-float": "the answer has no integers in EDN",
      "vectors-as-lists": "the answer has no vectors in EDN",
    },
  );
});

Deno.test("referenceMutations() mutates a text answer as text", () => {
  const m = byName(
    referenceMutations(parseBundle({
      name: "recall",
      files: recallBundle({
        "calibration.edn": '{:reference {"/out/list.md" "Wato 3\\nDust 4\\n"}}',
      }),
    })),
  );
  const text = (name: string) => answerOf(m[name], "/out/list.md");
  assert.equal(text("one-char-changed"), "Wauo 3\nDutt 4\n");
  assert.equal(text("numbers-plus-one"), "Wato 4\nDust 5\n");
  assert.equal(text("entry-dropped"), "Wato 3\n");
  assert.equal(text("entry-duplicated"), "Wato 3\nDust 4\nDust 4\n");
  assert.equal(text("whitespace"), "  Wato 3\n  Dust 4\n");
  assert.equal(text("trailing-newline"), "Wato 3\nDust 4");
  for (const name of ["values-swapped", "key-order", "integer-as-float", "vectors-as-lists"]) {
    assert.equal(m[name].applies, false, name);
  }
});

Deno.test("referenceMutations() grades a dataset's reference as the answer of a case with other gold", () => {
  const other = (files: Map<string, string>) =>
    referenceMutations(parseBundle({ name: "words", files })).find((m) => m.name === "other-case")!;
  const first = other(wordDataset(3));
  assert.ok(first.applies);
  assert.equal(first.caseId, "c2");
  assert.deepEqual(first.files, { "/out/answer.txt": "w1" });
  assert.equal(first.description, 'the reference graded as the answer of case "c2"');
  // c2 has c1's gold: the next case whose gold differs is c3.
  const skip = other(wordDataset(3, { "cases/c2/gold.edn": '{:word "w1"}' }));
  assert.ok(skip.applies && skip.caseId === "c3");
  const same = other(
    wordDataset(2, { "cases/c2/gold.edn": '{:word "w1"}' }),
  );
  assert.deepEqual(same.applies ? null : same.reason, "every other case has the same gold");
});
