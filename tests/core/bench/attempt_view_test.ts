import assert from "node:assert/strict";
import { attemptRecord as record } from "../../helpers/records.ts";
import { attemptText, attemptView } from "../../../core/bench/attempt_view.ts";

Deno.test("attemptView() shows fetched pages with their titles, bounded", () => {
  const r = record({
    candidate: "m",
    evidenceRef: "e",
    web: { mode: "frozen", searches: 1, requests: 3, pages: 2, denials: { blocked: 1 } },
  });
  const evidence = {
    candidate: { kind: "model", transcript: [], calls: 1 },
    web: { pagesRef: "p" },
  };
  const pages = {
    fetched: { "https://a.example/": "x".repeat(10_000), "https://b.example/": "short" },
    titles: { "https://a.example/": "A page" },
  };
  const v = attemptView(r, evidence, pages);
  assert.equal(v.fetched.length, 2);
  assert.equal(v.fetched[0].title, "A page");
  assert.equal(v.fetched[0].chars, 10_000);
  assert.ok(v.fetched[0].text.length < 4100);
  assert.match(
    attemptText(v),
    /Fetched {4}2 pages\n {2}https:\/\/a\.example\/ — A page \(10000 characters\)/,
  );
});

Deno.test("attemptView() says when the evidence blob is missing and shows the record's facts", () => {
  const r = record({
    candidate: "m",
    evidenceRef: "gone",
    status: "crashed",
    passed: false,
    verdict: { checks: { "completed?": false }, reward: 0 },
    ending: { message: null, exitCode: 9, signal: null, stderrTail: "bad" },
  });
  const v = attemptView(r, null);
  assert.equal(v.evidenceMissing, true);
  assert.equal(v.process?.exitCode, 9);
  assert.equal(v.process?.stderrTail, "bad");
  assert.match(attemptText(v), /Evidence {3}blob gone is missing/);
});
