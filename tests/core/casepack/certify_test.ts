import assert from "node:assert/strict";
import { certifyCases } from "../../../core/casepack/certify.ts";
import { completeSpec, parseOutcome } from "../../../core/casepack/spec.ts";
import { parseTable, type Table } from "../../../core/casepack/table.ts";

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

const table = (text: string, file = "invoices.csv"): Table =>
  parseTable(text, { file, format: "csv" });

const invoiceSpec = (extra: Record<string, unknown> = {}) =>
  completeSpec({
    name: "invoice-coding",
    id: "no",
    inputs: ["vendor", "text"],
    expected: [parseOutcome("account:exact"), parseOutcome("amount:number:0.01")],
    ...extra,
  });

Deno.test("certifyCases() gives every exclusion reason of the 8-row invoice table", () => {
  const cert = certifyCases(table(INVOICES), invoiceSpec(), new Map());
  assert.deepEqual(
    cert.verdicts.map((v) => [v.id, v.status, v.reasons]),
    [
      ["1", "excluded", [{ reason: "conflicting-outcomes" }]],
      ["2", "excluded", [{ reason: "duplicate-id" }]],
      ["2", "excluded", [{ reason: "duplicate-id" }]],
      ["4", "excluded", [{ reason: "unlabelled", fields: ["account"] }]],
      ["5", "excluded", [{ reason: "conflicting-outcomes" }]],
      ["row-6", "excluded", [{ reason: "no-id", row: 6 }]],
      ["7", "excluded", [{ reason: "outcome-not-gradable", fields: ["amount"] }]],
      ["8", "certified", []],
    ],
  );
  assert.equal(cert.cases, 8);
  assert.equal(cert.certified, 1);
  assert.deepEqual(cert.byReason, {
    certified: 1,
    "conflicting-outcomes": 2,
    "duplicate-id": 2,
    "no-id": 1,
    "outcome-not-gradable": 1,
    unlabelled: 1,
  });
  assert.deepEqual(Object.keys(cert.byReason), Object.keys(cert.byReason).sort());
  assert.deepEqual(cert.verdicts.map((v) => v.line), [2, 3, 4, 5, 6, 7, 8, 9]);
});

Deno.test("certifyCases() lists all reasons of a row in their order", () => {
  const t = table(
    [
      "no;text;doc;account;due",
      "A;same;;;someday",
      "A;same;;x;2025-01-01",
      ";same;inv.txt;y;2025-01-01",
    ].join("\n"),
  );
  const spec = completeSpec({
    name: "t",
    id: "no",
    inputs: ["text"],
    attachments: ["doc"],
    expected: [parseOutcome("account:exact"), parseOutcome("due:date")],
  });
  const cert = certifyCases(t, spec, new Map([["inv.txt", "Invoice"]]));
  assert.deepEqual(cert.verdicts.map((v) => v.reasons), [
    [
      { reason: "duplicate-id" },
      { reason: "unlabelled", fields: ["account"] },
      { reason: "missing-attachment", columns: ["doc"] },
      { reason: "conflicting-outcomes" },
    ],
    [
      { reason: "duplicate-id" },
      { reason: "missing-attachment", columns: ["doc"] },
      { reason: "conflicting-outcomes" },
    ],
    [{ reason: "no-id", row: 3 }, { reason: "conflicting-outcomes" }],
  ]);
  assert.deepEqual(cert.byReason, {
    "conflicting-outcomes": 3,
    "duplicate-id": 2,
    "missing-attachment": 2,
    "no-id": 1,
    unlabelled: 1,
  });
});

Deno.test("certifyCases() grades the row's own outcome only for rows with an id and labels", () => {
  const t = table(
    ["no;text;amount;when", "1;a;about 20;soon", ";b;about 20;soon", "3;c;;soon"].join("\n"),
  );
  const spec = completeSpec({
    name: "t",
    id: "no",
    inputs: ["text"],
    expected: [parseOutcome("amount:number"), parseOutcome("when:date")],
  });
  const cert = certifyCases(t, spec, new Map());
  assert.deepEqual(cert.verdicts.map((v) => v.reasons), [
    [{ reason: "outcome-not-gradable", fields: ["amount", "when"] }],
    [{ reason: "no-id", row: 2 }],
    [{ reason: "unlabelled", fields: ["amount"] }],
  ]);
});

Deno.test("certifyCases() sanitises ids before finding duplicates", () => {
  const t = table(["no;text;k", "A 1;x;1", "A/1;y;2", " A 2 ;z;3"].join("\n"));
  const spec = completeSpec({
    name: "t",
    id: "no",
    inputs: ["text"],
    expected: [parseOutcome("k:exact")],
  });
  const cert = certifyCases(t, spec, new Map());
  assert.deepEqual(cert.verdicts.map((v) => [v.id, v.status]), [
    ["A_1", "excluded"],
    ["A_1", "excluded"],
    ["A_2", "certified"],
  ]);
});

Deno.test("certifyCases() compares inputs and outcomes exactly, not normalised", () => {
  const t = table(["no;text;k", "1;x;a", "2;x ;b", "3;y;a", "4;y;a "].join("\n"));
  const spec = completeSpec({
    name: "t",
    id: "no",
    inputs: ["text"],
    expected: [parseOutcome("k:ci")],
  });
  const cert = certifyCases(t, spec, new Map());
  assert.deepEqual(cert.verdicts.map((v) => v.status), [
    "certified",
    "certified",
    "excluded",
    "excluded",
  ]);
});

Deno.test("certifyCases() tells a JSON number from the same text", () => {
  const t = parseTable(
    ['{"no": 1, "text": "x", "k": 4210}', '{"no": 2, "text": "x", "k": "4210"}'].join("\n"),
    { file: "t.jsonl", format: "jsonl" },
  );
  const spec = completeSpec({
    name: "t",
    id: "no",
    inputs: ["text"],
    expected: [parseOutcome("k:exact")],
  });
  const cert = certifyCases(t, spec, new Map());
  assert.deepEqual(cert.verdicts.map((v) => [v.id, v.reasons]), [
    ["1", [{ reason: "conflicting-outcomes" }]],
    ["2", [{ reason: "conflicting-outcomes" }]],
  ]);
});

Deno.test("certifyCases() counts a blank attachment cell and an unread file as missing", () => {
  const t = table(["no;text;doc;k", "1;a;inv1.txt;x", "2;b;;x", "3;c;nope.txt;x"].join("\n"));
  const spec = completeSpec({
    name: "t",
    id: "no",
    inputs: ["text"],
    attachments: ["doc"],
    expected: [parseOutcome("k:exact")],
  });
  const cert = certifyCases(t, spec, new Map([["inv1.txt", "Invoice 1"]]));
  assert.deepEqual(cert.verdicts.map((v) => v.reasons), [
    [],
    [{ reason: "missing-attachment", columns: ["doc"] }],
    [{ reason: "missing-attachment", columns: ["doc"] }],
  ]);
});
