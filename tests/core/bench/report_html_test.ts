import assert from "node:assert/strict";
import type { AttemptRecord } from "../../../core/bench/records.ts";
import { buildScorecard, type ScorecardOptions } from "../../../core/bench/scorecard.ts";
import { reportBlocks } from "../../../core/bench/report.ts";
import {
  escapeHtml,
  frontierOf,
  frontierSvg,
  heatColour,
  placeLabels,
  renderReportHtml,
} from "../../../core/bench/report_html.ts";

const T0 = Date.parse("2026-10-01T08:00:00Z");
const CASES = ["c1", "c2", "c3", "c4"];

function records(
  candidate: string,
  passes: number,
  listMicros: number,
  failReward = 0,
): AttemptRecord[] {
  return CASES.map((caseId, i) => ({
    experimentId: "exp-1",
    candidate,
    caseId,
    repetition: 0,
    inputHash: "h",
    tryNo: 1,
    startedAt: new Date(T0 + 1000 * i).toISOString(),
    elapsedMs: 1000,
    status: "completed",
    verdict: { checks: { ok: i < passes }, reward: i < passes ? 1 : failReward },
    fault: null,
    passed: i < passes,
    usage: { input: 10, output: 5, cacheRead: 0, cacheWrite: 0 },
    billedMicros: listMicros,
    listMicros: null,
    isolated: true,
    trust: "ad-hoc",
    evidenceRef: null,
  }));
}

const OPTS: ScorecardOptions = {
  candidates: ["luna", "haiku", "<cheap&>"],
  expectedCells: 12,
  trust: "ad-hoc",
  bundleId: "bundle-1",
  experimentId: "exp-1",
};

function scorecard() {
  return buildScorecard(
    [
      ...records("luna", 3, 2000, 0.5),
      ...records("haiku", 1, 6000),
      ...records("<cheap&>", 2, 500, 0.25),
    ],
    OPTS,
  );
}

Deno.test("renderReportHtml() is one self-contained page: no scripts, links or sources", () => {
  const html = renderReportHtml(scorecard(), { title: "Bank booking" });
  assert.ok(html.startsWith('<!doctype html>\n<html lang="en">'));
  assert.ok(html.includes("<title>Bank booking</title>"));
  assert.ok(html.includes("<h1>Bank booking</h1>"));
  for (const banned of ["<script", "<link", "src=", "href=", "http:", "https:", "@import"]) {
    assert.ok(!html.includes(banned), banned);
  }
  assert.ok(html.trimEnd().endsWith("</html>"));
});

Deno.test("renderReportHtml() holds every table cell of the Markdown report", () => {
  const sc = scorecard();
  const html = renderReportHtml(sc);
  for (const block of reportBlocks(sc)) {
    if (block.kind !== "table") continue;
    for (const cell of [...block.table.header, ...block.table.rows.flat()]) {
      assert.ok(html.includes(`>${escapeHtml(cell)}</t`), cell);
    }
  }
  assert.ok(html.includes('<td class="r">3 (75%)</td>'), html);
  assert.ok(html.includes("<h2>Paired comparison</h2>"));
});

Deno.test("renderReportHtml() escapes names and renders bold and code", () => {
  const html = renderReportHtml(scorecard(), { note: "Two <b>models</b> & one `cheap`" });
  assert.ok(html.includes("<p>Two &lt;b&gt;models&lt;/b&gt; &amp; one <code>cheap</code></p>"));
  assert.ok(html.includes("<td>&lt;cheap&amp;&gt;</td>"));
  assert.ok(!html.includes("<cheap&>"));
  assert.ok(html.includes("Scored by an <strong>ad-hoc</strong> verifier"));
  assert.ok(html.includes("Bundle <code>bundle-1</code>"));
});

Deno.test("escapeHtml() leaves text with nothing to escape as it is, and escapes every kind of character it must", () => {
  assert.equal(escapeHtml("c0001 0.500 (1/2) naïve ✓"), "c0001 0.500 (1/2) naïve ✓");
  assert.equal(escapeHtml('a&b<c>d"e'), "a&amp;b&lt;c&gt;d&quot;e");
  // What terminalSafe() writes as escapes, each found alone among plain text.
  for (
    const [c, shown] of [
      ["\x1b", "\\u001b"],
      ["\r", "\\r"],
      ["\x7f", "\\u007f"],
      ["\x85", "\\u0085"],
      ["\u202e", "\\u202e"],
      ["\u2066", "\\u2066"],
    ]
  ) {
    assert.equal(escapeHtml(`x${c}y`), `x${shown}y`);
  }
  // Tab and newline stay.
  assert.equal(escapeHtml("a\tb\nc"), "a\tb\nc");
});

Deno.test("heatColour() gives the same colour for a reward every time, and each reward its own", () => {
  const first = [0, 0.25, 0.5, 1].map(heatColour);
  assert.deepEqual([0, 0.25, 0.5, 1].map(heatColour), first);
  assert.equal(new Set(first).size, 4);
  assert.equal(heatColour(0), "hsl(0 70% 78%)");
  assert.equal(heatColour(1), "hsl(120 70% 78%)");
  assert.equal(heatColour(-3), heatColour(0));
});

Deno.test("renderReportHtml() ends each code span at a fence of its own length", () => {
  const html = renderReportHtml(scorecard(), {
    note: "one `a` two ``b ` c`` three `d`` e` and ``` f ``` and `unclosed",
  });
  assert.ok(
    html.includes(
      "<p>one <code>a</code> two <code>b ` c</code> three <code>d`` e</code> and <code>f</code> and `unclosed</p>",
    ),
    html.match(/<p>one.*<\/p>/)?.[0] ?? html,
  );
});

Deno.test("frontierSvg() plots one point per candidate with a reward and a cost", () => {
  const sc = buildScorecard([...records("luna", 3, 2000, 0.5)], {
    ...OPTS,
    candidates: ["luna", "idle"],
    expectedCells: 8,
  });
  const svg = frontierSvg(sc.candidates);
  assert.equal(svg.match(/<circle /g)?.length, 1);
  assert.ok(svg.includes("<title>luna: reward 0.875, $0.0020 per attempt</title>"));
  assert.ok(!svg.includes("idle"));
  assert.ok(!svg.includes("<polyline"), "one point makes no frontier line");
  assert.equal(frontierSvg([]), "");
});

Deno.test("frontierSvg() joins the candidates no other beats on cost and reward", () => {
  const svg = frontierSvg(scorecard().candidates);
  assert.equal(svg.match(/<circle /g)?.length, 3);
  // <cheap&> ($0.0005, 0.625) and luna ($0.0020, 0.875) are on it; haiku ($0.0060, 0.25) is not.
  const line = svg.match(/<polyline class="frontier" points="([^"]+)"/);
  assert.ok(line, svg);
  assert.equal(line[1].split(" ").length, 2);
});

Deno.test("frontierOf() keeps points that are cheaper or better than every other", () => {
  const p = (name: string, cost: number, reward: number) => ({
    name,
    cost,
    reward,
    low: reward,
    high: reward,
  });
  const kept = frontierOf([
    p("dear-good", 3, 0.9),
    p("cheap-bad", 1, 0.2),
    p("mid", 2, 0.6),
    p("dominated", 2.5, 0.5),
    p("same-cost-worse", 1, 0.1),
  ]);
  assert.deepEqual(kept.map((k) => k.name), ["cheap-bad", "mid", "dear-good"]);
});

Deno.test("placeLabels() moves labels of candidates that share a point apart", () => {
  const spots = [
    { text: "builtin-noop", x: 78, y: 302 },
    { text: "mine", x: 78, y: 302 },
    { text: "other", x: 78, y: 302 },
    { text: "far", x: 500, y: 40 },
  ];
  const placed = placeLabels(spots, { top: 30, bottom: 306 });
  for (let i = 0; i < placed.length; i++) {
    for (let j = i + 1; j < placed.length; j++) {
      const a = placed[i];
      const b = placed[j];
      const sideBySide = a.x + a.text.length * 7.5 <= b.x || b.x + b.text.length * 7.5 <= a.x;
      assert.ok(sideBySide || Math.abs(a.y - b.y) >= 15, JSON.stringify([a, b]));
    }
  }
  assert.deepEqual(placed[3], spots[3]); // a label with room keeps its place
});

Deno.test("frontierSvg() draws the names of two candidates at one point on different lines", () => {
  const sc = buildScorecard([...records("a-noop", 0, 0), ...records("b-noop", 0, 0)], {
    ...OPTS,
    candidates: ["a-noop", "b-noop"],
    expectedCells: 8,
  });
  const svg = frontierSvg(sc.candidates);
  const ys = [...svg.matchAll(/<text class="name" x="[\d.]+" y="([\d.]+)">/g)].map((m) => m[1]);
  assert.equal(ys.length, 2);
  assert.notEqual(ys[0], ys[1]);
});

Deno.test("frontierSvg() plots against median time, and says so, when every cost is $0", () => {
  const slow = records("slow", 3, 0, 0.5).map((r) => ({ ...r, elapsedMs: 4000 }));
  const fast = records("fast", 2, 0).map((r) => ({ ...r, elapsedMs: 500 }));
  const sc = buildScorecard([...slow, ...fast], {
    ...OPTS,
    candidates: ["slow", "fast"],
    expectedCells: 8,
  });
  const svg = frontierSvg(sc.candidates);
  assert.equal(svg.match(/<circle /g)?.length, 2);
  assert.ok(svg.includes("Median time per attempt (every cost is $0)"), svg);
  assert.ok(svg.includes("<title>slow: reward 0.875, 4.00 s median per attempt</title>"), svg);
  assert.ok(svg.includes("<title>fast: reward 0.500, 0.50 s median per attempt</title>"), svg);
  assert.ok(svg.includes("so the plot puts reward against median time per attempt instead"));
  assert.ok(!svg.includes("Cost per attempt"));
  // Two points apart on the time axis: both are on the frontier (fast is quicker, slow better).
  const xs = [...svg.matchAll(/<circle class="point" cx="([\d.]+)"/g)].map((m) => Number(m[1]));
  assert.ok(xs[0] > xs[1], String(xs));
  // One candidate with a cost above $0 brings the cost axis back.
  const priced = buildScorecard([...slow, ...records("paid", 1, 100)], {
    ...OPTS,
    candidates: ["slow", "paid"],
    expectedCells: 8,
  });
  assert.ok(frontierSvg(priced.candidates).includes("Cost per attempt (list price)"));
});
