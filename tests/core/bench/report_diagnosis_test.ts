import assert from "node:assert/strict";
import { attemptRecord as record, crashedRecord } from "../../helpers/records.ts";
import type { AttemptRecord } from "../../../core/bench/records.ts";
import { buildScorecard } from "../../../core/bench/scorecard.ts";
import { diagnose } from "../../../core/bench/diagnosis.ts";
import { renderReport } from "../../../core/bench/report.ts";
import { renderReportHtml } from "../../../core/bench/report_html.ts";

const CASES = ["c1", "c2", "c3"];

function records(): AttemptRecord[] {
  const good = CASES.map((caseId) => record({ candidate: "good", caseId }));
  const mine = CASES.map((caseId) => crashedRecord(caseId));
  return [...good, ...mine];
}

function report(recs = records(), cases: string[] | null = CASES, ofBundle = 5) {
  const candidates = ["good", "mine"];
  const sc = buildScorecard(recs, {
    candidates,
    expectedCells: recs.length,
    trust: "ad-hoc",
    bundleId: "b",
    experimentId: "exp-1",
  });
  const diagnosis = diagnose(recs, { candidates, cases, bundleCases: ofBundle });
  return { md: renderReport(sc, { diagnosis }), html: renderReportHtml(sc, { diagnosis }) };
}

Deno.test("renderReport() says what went wrong: each cause, its count, an example with stderr", () => {
  const { md } = report();
  assert.match(md, /## What went wrong/);
  assert.match(md, /\*\*mine\*\*: every attempt \(3\) crashed, so its scores say nothing/);
  assert.match(md, /--mount/);
  assert.ok(
    md.includes(
      "| mine | crashed | exit status 2: sh: 0: cannot open my_agent.sh: No such file | 3 | case c1, repetition 0 |",
    ),
    md,
  );
  assert.match(
    md,
    /\*\*mine\*\*, crashed \(case `c1`, repetition 0, exit status 2, after 1\.0 s\)/,
  );
  assert.match(md, /```text\nsh: 0: cannot open my_agent\.sh: No such file\n```/);
  // The frontier counts the outcomes.
  assert.match(md, /\| mine \| 3 \| 0 \(0%\) .*\| 3 crashed \|/);
});

Deno.test("renderReport() lists per-case results and the cases that ran", () => {
  const { md, html } = report();
  assert.match(md, /## Per-case results/);
  assert.match(md, /3 of the bundle's 5 cases ran: `c1`, `c2`, `c3`\./);
  assert.ok(md.includes("| Case | good | mine |"), md);
  assert.ok(md.includes("| c1 | 1.000 (1/1) | 0.000 (0/1) |"), md);
  // The HTML page shades the cells as a heat map.
  assert.match(html, /<td class="r" style="background:hsl\(120 /);
  assert.match(html, /<td class="r" style="background:hsl\(0 /);
});

Deno.test("renderReport() lists flagged cases in the item analysis, a sentence each", () => {
  const cands = ["a", "b"];
  const recs = cands.flatMap((candidate) =>
    CASES.map((caseId) =>
      record({
        candidate,
        caseId,
        passed: caseId !== "c3",
        verdict: { checks: { ok: caseId !== "c3" }, reward: caseId === "c3" ? 0 : 1 },
      })
    )
  );
  const sc = buildScorecard(recs, {
    candidates: cands,
    expectedCells: 6,
    trust: "ad-hoc",
    bundleId: "b",
    experimentId: "exp-1",
  });
  const md = renderReport(sc, {
    diagnosis: diagnose(recs, { candidates: cands, cases: CASES, bundleCases: 3 }),
  });
  assert.match(md, /## Item analysis/);
  assert.match(md, /Case `c3`: no candidate passed it \(0 of 2 attempts\)/);
  assert.match(md, /Case `c1`: every candidate passed it \(2 of 2 attempts\); it is saturated/);
  assert.match(md, /All 3 cases of the bundle ran\./);
});

Deno.test("renderReport() has no What went wrong section when every attempt passed", () => {
  const recs = CASES.map((caseId) => record({ candidate: "good", caseId }));
  const { md } = report(recs, CASES, 3);
  assert.ok(!md.includes("What went wrong"), md);
});

/** The cells of a Markdown table line, split at the pipes that are not escaped. */
function cellsOf(line: string): string[] {
  return line.split(/(?<!\\)\|/).slice(1, -1);
}

Deno.test("renderReport() keeps hostile candidate, check and case names and stderr literal", () => {
  const evil = "|x|[click](javascript:alert(1))";
  const check = "](javascript:alert(1))<img src=x onerror=alert(1)>";
  const cases = ["c`1", "c2"];
  const recs = cases.flatMap((caseId) => [
    record({ candidate: "good", caseId }),
    record({
      candidate: evil,
      caseId,
      passed: false,
      verdict: { checks: { [check]: false }, reward: 0 },
    }),
    crashedRecord(caseId, {
      candidate: "**mine**\u202e",
      ending: {
        message: "ended",
        exitCode: 2,
        signal: null,
        stderrTail: "\x1b]0;owned\x07\r```\n# not a heading",
      },
    }),
  ]);
  const candidates = ["good", evil, "**mine**\u202e"];
  const sc = buildScorecard(recs, {
    candidates,
    expectedCells: recs.length,
    trust: "ad-hoc",
    bundleId: "b",
    experimentId: "exp-1",
  });
  const diagnosis = diagnose(recs, { candidates, cases, bundleCases: 3 });
  const md = renderReport(sc, { diagnosis });
  const html = renderReportHtml(sc, { diagnosis });

  // deno-lint-ignore no-control-regex -- the characters looked for
  assert.doesNotMatch(md, /[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]/);
  assert.doesNotMatch(md, /(?<!\\)\]\(/, "no link can open");
  assert.doesNotMatch(md, /(?<!\\)<img/, "no HTML");
  // Every table row has as many cells as its header.
  const lines = md.split("\n");
  for (const [i, line] of lines.entries()) {
    if (!line.startsWith("| ") || !lines[i + 1]?.startsWith("|---")) continue;
    const width = cellsOf(line).length;
    for (let j = i + 2; lines[j]?.startsWith("|"); j++) {
      assert.equal(cellsOf(lines[j]).length, width, lines[j]);
    }
  }
  assert.ok(md.includes("| \\|x\\|\\[click\\](javascript:alert(1)) | 2 | 0 (0%) |"), md);
  assert.ok(md.includes("**\\*\\*mine\\*\\*\\\\u202e**, crashed (case `c2`,"), md);
  assert.ok(md.includes("2 of the bundle's 3 cases ran: ``c`1``, `c2`."), md);
  // The stderr stays in its fence, which is longer than any run of backticks in it.
  assert.ok(md.includes("````text\n\\u001b]0;owned\\u0007\\r```\n# not a heading\n````"), md);

  assert.doesNotMatch(html, /<img|<a |href/);
  // deno-lint-ignore no-control-regex -- the characters looked for
  assert.doesNotMatch(html, /[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]/);
  // The HTML shows the names as they are: the Markdown's escapes are resolved.
  assert.ok(
    html.includes("<strong>**mine**\\u202e</strong>, crashed (case <code>c2</code>,"),
    html,
  );
  assert.ok(html.includes("cases ran: <code>c`1</code>, <code>c2</code>."), html);
  assert.ok(html.includes("<td>|x|[click](javascript:alert(1))</td>"), html);
});
