import assert from "node:assert/strict";
import { buildCasePack, generatedTask } from "../../../core/casepack/generate.ts";
import { CASE_CHECKER_SOURCE } from "../../../core/casepack/checker_source.ts";
import { casepackCheck } from "../../../core/casepack/rules.ts";
import { completeSpec, parseOutcome, type SpecDraft } from "../../../core/casepack/spec.ts";
import { parseTable } from "../../../core/casepack/table.ts";
import { bundleProblems, parseBundle } from "../../../core/bundle/parse.ts";
import { checkerInputFor } from "../../../core/bundle/checker_input.ts";
import { calibrate } from "../../../core/calibrate/calibrate.ts";
import { readEdn } from "../../../core/edn/read.ts";
import { toPlain } from "../../../core/edn/plain.ts";
import { DvergrError } from "../../../core/errors.ts";
import { createCheckerPool } from "../../../sandbox/checker_pool.ts";

const INVOICES = [
  "no;vendor;text;account;amount",
  "1;ACME;Paper;4930;10,00",
  "2;Beta;Toner;4930;20,00",
  "2;Gamma;Desk;0650;300,00",
  "4;Delta;Coffee;;5,00",
  "5;ACME;Paper;4940;10,00",
  ";Eta;Chairs;0650;150,00",
  "7;Theta;Misc;4900;about 20",
  "8;Iota;Stamps;4910;12,50",
].join("\r\n") + "\r\n";

const spec = (extra: SpecDraft = {}) =>
  completeSpec({
    name: "invoice-coding",
    id: "no",
    inputs: ["vendor", "text"],
    expected: [parseOutcome("account:exact"), parseOutcome("amount:number:0.01")],
    ...extra,
  });

const build = (text = INVOICES, s = spec(), att = new Map<string, string>()) =>
  buildCasePack(parseTable(text, { file: "invoices.csv", format: "csv" }), s, att);

const plainOf = (text: string) => toPlain(readEdn(text));

Deno.test("buildCasePack() writes only certified cases and a well-formed bundle", () => {
  const { files } = build();
  assert.ok(files);
  assert.deepEqual([...files.keys()].sort(), [
    "calibration.edn",
    "cases/8/fixtures/docs/case.edn",
    "cases/8/gold.edn",
    "certification.edn",
    "checker.js",
    "workflow.edn",
  ]);
  assert.deepEqual(bundleProblems(files), []);
  assert.deepEqual(plainOf(files.get("cases/8/gold.edn")!), {
    expected: { account: "4910", amount: "12,50" },
  });
  assert.deepEqual(plainOf(files.get("cases/8/fixtures/docs/case.edn")!), {
    vendor: "Iota",
    text: "Stamps",
  });
  assert.equal(files.get("checker.js"), CASE_CHECKER_SOURCE);
});

Deno.test("buildCasePack() writes certification.edn with every excluded case and its reasons", () => {
  const { files } = build();
  assert.deepEqual(plainOf(files!.get("certification.edn")!), {
    cases: 8,
    certified: 1,
    "by-reason": {
      certified: 1,
      "conflicting-outcomes": 2,
      "duplicate-id": 2,
      "no-id": 1,
      "outcome-not-gradable": 1,
      unlabelled: 1,
    },
    excluded: [
      { id: "1", status: "excluded", reasons: [{ reason: "conflicting-outcomes" }] },
      { id: "2", status: "excluded", reasons: [{ reason: "duplicate-id" }] },
      { id: "2", status: "excluded", reasons: [{ reason: "duplicate-id" }] },
      { id: "4", status: "excluded", reasons: [{ reason: "unlabelled", fields: ["account"] }] },
      { id: "5", status: "excluded", reasons: [{ reason: "conflicting-outcomes" }] },
      { id: "row-6", status: "excluded", reasons: [{ reason: "no-id", row: 6 }] },
      {
        id: "7",
        status: "excluded",
        reasons: [{ reason: "outcome-not-gradable", fields: ["amount"] }],
      },
    ],
  });
  const text = files!.get("certification.edn")!;
  assert.ok(text.includes(":status :excluded"), text);
  assert.ok(text.includes("{:reason :no-id, :row 6}") || text.includes(":reason :no-id"), text);
});

Deno.test("buildCasePack() gives no files when no case is certified", () => {
  const { files, certification } = build(INVOICES.split("\r\n").slice(0, 8).join("\r\n"));
  assert.equal(files, null);
  assert.equal(certification.certified, 0);
  assert.equal(certification.cases, 7);
});

Deno.test("buildCasePack() generates workflow.edn with the fields as params and the task", () => {
  const { files } = build(INVOICES, spec({ title: "Invoice coding", doc: "Book invoices." }));
  const w = plainOf(files!.get("workflow.edn")!) as Record<string, unknown>;
  assert.deepEqual(w, {
    title: "Invoice coding",
    doc: "Book invoices.",
    task: 'A case is in /docs/case.edn: a map of "vendor", "text". Determine its outcome and ' +
      "write /out/answer.edn: an EDN map from each of these fields (the name as a string) to " +
      'its value:\n- "account"\n- "amount" (a number)',
    params: {
      fields: { account: { rule: "exact" }, amount: { rule: "number", tolerance: 0.01 } },
    },
    capture: ["/out"],
  });
  const bundle = parseBundle({ name: "invoice-coding", files: files! });
  assert.equal(bundle.definition.title, "Invoice coding");
  assert.deepEqual(bundle.cases.map((c) => c.id), ["8"]);
});

Deno.test("generatedTask() names attachments, docs and type hints, in field order", () => {
  const s = spec({
    attachments: ["scan", "mail"],
    expected: [
      { field: "due", rule: "date", doc: "when it is due" },
      { field: "tags", rule: "set" },
      { field: "vendor_name", rule: "ci", doc: "the supplier" },
      { field: "total", rule: "number" },
    ],
  });
  assert.equal(
    generatedTask(s),
    'A case is in /docs/case.edn: a map of "vendor", "text". Its documents are in /docs/ ' +
      "(scan, mail columns). Determine its outcome and write /out/answer.edn: an EDN map " +
      "from each of these fields (the name as a string) to its value:\n" +
      '- "due": when it is due (a date, yyyy-mm-dd)\n- "tags" (a vector of values)\n' +
      '- "vendor_name": the supplier\n- "total" (a number)',
  );
});

Deno.test("generatedTask() keeps a given task and ends it with the answer contract", () => {
  const task = generatedTask(spec({ task: "Book this bank line to an SKR04 account." }));
  assert.ok(
    task.startsWith("Book this bank line to an SKR04 account.\n\nThe case is in /docs/case.edn"),
  );
  assert.ok(
    task.endsWith(
      "Write /out/answer.edn: an EDN map from each of these fields (the name as a string) to " +
        'its value:\n- "account"\n- "amount" (a number)',
    ),
    task,
  );
});

Deno.test("buildCasePack() writes calibration.edn from the first certified case", () => {
  const text = "no;text;account;amount;tags;due\n" +
    "A;x;4930;119,00;a|b;01.02.2025\nB;y;4931;5;c;2025-02-02\n";
  const { files } = build(
    text,
    spec({
      inputs: ["text"],
      expected: [
        parseOutcome("account:exact"),
        parseOutcome("amount:number:0.01"),
        parseOutcome("tags:set"),
        parseOutcome("due:date"),
      ],
    }),
  );
  assert.deepEqual(plainOf(files!.get("calibration.edn")!), {
    case: "A",
    reference: {
      "/out/answer.edn": '{"account" "4930", "amount" "119,00", "tags" "a|b", "due" "01.02.2025"}',
    },
    damaged: {
      account: {
        files: {
          "/out/answer.edn":
            '{"account" "not 4930", "amount" "119,00", "tags" "a|b", "due" "01.02.2025"}',
        },
        loses: ["account"],
      },
      amount: {
        files: {
          "/out/answer.edn":
            '{"account" "4930", "amount" "1129", "tags" "a|b", "due" "01.02.2025"}',
        },
        loses: ["amount"],
      },
      tags: {
        files: {
          "/out/answer.edn":
            '{"account" "4930", "amount" "119,00", "tags" "not a|b", "due" "01.02.2025"}',
        },
        loses: ["tags"],
      },
      due: {
        files: {
          "/out/answer.edn":
            '{"account" "4930", "amount" "119,00", "tags" "a|b", "due" "not 01.02.2025"}',
        },
        loses: ["due"],
      },
    },
  });
});

Deno.test("buildCasePack() damages a number too large for the usual offset so it still loses", () => {
  for (const amount of ["12345678901234567890", "1e300", "-1.7e308"]) {
    const { files } = build(
      `no;text;amount\nA;x;${amount}\n`,
      spec({ inputs: ["text"], expected: [parseOutcome("amount:number:0.01")] }),
    );
    const damaged = plainOf(files!.get("calibration.edn")!) as {
      damaged: { amount: { files: Record<string, string>; loses: string[] } };
    };
    const answer = plainOf(damaged.damaged.amount.files["/out/answer.edn"]);
    const verdict = casepackCheck(
      {
        files: { "/out/answer.edn": damaged.damaged.amount.files["/out/answer.edn"] },
        params: { fields: { amount: { rule: "number", tolerance: 0.01 } } },
        gold: { expected: { amount } },
      },
      plainOf,
    );
    assert.equal(verdict.checks.amount, false, `${amount} → ${JSON.stringify(answer)}`);
  }
});

Deno.test("buildCasePack() puts shared files and attachments where the worlds see them", () => {
  const text = "no;vendor;doc;account\n1;ACME;docs/inv1.txt;4930\n2;Beta;inv2.txt;4931\n";
  const { files } = build(
    text,
    completeSpec({
      name: "t",
      id: "no",
      inputs: ["vendor"],
      attachments: ["doc"],
      expected: [parseOutcome("account:exact")],
      shared: new Map([["docs/accounts.txt", "4930 Bürobedarf"]]),
    }),
    new Map([["docs/inv1.txt", "Invoice one"]]),
  );
  assert.equal(files!.get("fixtures/docs/accounts.txt"), "4930 Bürobedarf");
  assert.equal(files!.get("cases/1/fixtures/docs/inv1.txt"), "Invoice one");
  assert.deepEqual(plainOf(files!.get("cases/1/fixtures/docs/case.edn")!), { vendor: "ACME" });
  assert.equal(files!.has("cases/2/gold.edn"), false);
  const task = (plainOf(files!.get("workflow.edn")!) as { task: string }).task;
  assert.ok(
    task.includes(
      "Its documents are in /docs/ (doc column). Every case also has /docs/accounts.txt. " +
        "Determine its outcome",
    ),
    task,
  );
});

Deno.test("buildCasePack() refuses two attachments of a case landing on one path", () => {
  const text = "no;vendor;a;b;account\n1;ACME;x/inv.txt;y/inv.txt;4930\n";
  const s = completeSpec({
    name: "t",
    id: "no",
    inputs: ["vendor"],
    attachments: ["a", "b"],
    expected: [parseOutcome("account:exact")],
  });
  assert.throws(
    () => build(text, s, new Map([["x/inv.txt", "1"], ["y/inv.txt", "2"]])),
    (e: unknown) => e instanceof DvergrError && e.message.includes("/docs/inv.txt"),
  );
});

Deno.test("the generated bundle calibrates and its checker grades in the sandbox as on the host", async () => {
  const pool = createCheckerPool({ workers: 1 });
  try {
    const { files } = build();
    const bundle = parseBundle({ name: "invoice-coding", files: files! });
    const result = await calibrate(bundle, pool);
    assert.deepEqual(result.problems, []);
    assert.equal(result.ok, true);
    const answers = [
      '{"account" "4910" "amount" "12,50"}',
      "{:account 4910 :amount 12.5}",
      '{"account" "4910.0" "amount" "12.504"}',
      '{"account" "4910" "amount" "12.52"}',
      '{"account" "4911"}',
      "[1 2]",
      "{:account",
    ];
    const got = [];
    for (const a of answers) {
      const input = checkerInputFor(bundle, { files: { "/out/answer.edn": a }, caseId: "8" });
      const run = await pool.check(bundle.checker, input);
      assert.ok(run.ok, JSON.stringify(run));
      assert.deepEqual(run.verdict, casepackCheck(input, plainOf), a);
      got.push(run.verdict.reward);
    }
    assert.deepEqual(got, [1, 1, 0.5, 0.5, 0, 0, 0]);
  } finally {
    pool.close();
  }
});

Deno.test("the generated checker grades an amount of 100,000 digits and an x in the sandbox at once", async () => {
  const pool = createCheckerPool({ workers: 1 });
  try {
    const { files } = build();
    const bundle = parseBundle({ name: "invoice-coding", files: files! });
    const answer = `{"account" "4910" "amount" "${"1".repeat(100_000)}x"}`;
    const input = checkerInputFor(bundle, { files: { "/out/answer.edn": answer }, caseId: "8" });
    const run = await pool.check(bundle.checker, input);
    // Within the 20 s limit: ~0.6 s here with the checker's load (load 2); the quadratic
    // pattern ran past the limit (a timeout fault).
    assert.ok(run.ok, JSON.stringify(run));
    assert.deepEqual(run.verdict.checks, { "answer-present": true, account: true, amount: false });
  } finally {
    pool.close();
  }
});
