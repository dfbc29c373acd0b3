import assert from "node:assert/strict";
import { attemptRecord as record } from "../../helpers/records.ts";
import { attemptText, attemptView } from "../../../core/bench/attempt_view.ts";
import { attemptPage } from "../../../core/view/attempt_page.ts";
import { lineDiff } from "../../../core/view/line_diff.ts";

const EVIL = '<script>alert(1)</script><img src=x onerror="alert(2)">';

/** A model attempt with a transcript, tool calls, gateway events, pages and judge questions. */
function modelAttempt() {
  const r = record({
    candidate: "m",
    evidenceRef: "e",
    judge: {
      model: "judge-model",
      calls: 1,
      usage: { input: 10, output: 2, cacheRead: 0, cacheWrite: 0 },
      billedMicros: 5,
      listMicros: 5,
    },
  });
  const evidence = {
    candidate: {
      kind: "model",
      model: "m-1",
      provider: "anthropic",
      calls: 2,
      toolCalls: 1,
      transcript: [
        {
          role: "assistant",
          text: `I will read ${EVIL}`,
          toolCalls: [{ name: "read_file", arguments: `{"path":"${EVIL}"}` }],
        },
        { role: "tool", results: [{ name: "read_file", content: EVIL, isError: false }] },
      ],
      gateway: {
        mcpCalls: [{ at: 10, tool: EVIL, args: { x: EVIL }, resultChars: 3 }],
        modelLog: [{ at: 20, method: "POST", path: "/v1/messages", model: "m-1", status: 200 }],
      },
    },
    captured: { files: { "/out/a.txt": `new\n${EVIL}\n`, "/out/same.txt": "same\n" } },
    judge: {
      requests: [{ id: "q1", prompt: `Is it right? ${EVIL}` }, { id: "q2", prompt: "unanswered" }],
      answers: { q1: `yes ${EVIL}` },
    },
  };
  const pages = { fetched: { "https://a.example/": EVIL }, titles: { "https://a.example/": EVIL } };
  return attemptView(r, evidence, pages);
}

Deno.test("attemptPage() shows the transcript, tool calls, gateway, pages and judge questions, all escaped", () => {
  const v = modelAttempt();
  assert.deepEqual(v.judged, [
    { id: "q1", question: `Is it right? ${EVIL}`, answer: `yes ${EVIL}` },
    { id: "q2", question: "unanswered", answer: null },
  ]);
  assert.match(attemptText(v), /asked q1: Is it right\? <script>/);
  const html = attemptPage("tok", v, { "/out/a.txt": "old\n", "/out/same.txt": "same\n" });
  assert.ok(!html.includes("<script>alert"), "no script of the candidate's");
  assert.ok(!/<img/i.test(html));
  assert.match(html, /<h2>Model transcript<\/h2><p>m-1 \(anthropic\): 2 calls, 1 tool calls/);
  assert.match(html, /<p>calls <code>read_file<\/code><\/p>/);
  assert.match(html, /<p>result of <code>read_file<\/code><\/p><pre>&lt;script&gt;/);
  assert.match(html, /<h2>Gateway<\/h2><p>2 calls\.<\/p>/);
  assert.match(html, /POST \/v1\/messages m-1<\/td><td>200/);
  assert.match(html, /<h2>Fetched pages<\/h2>/);
  assert.match(html, /<h2>Judge<\/h2><p>judge-model: 1 calls/);
  assert.match(
    html,
    /<span class="role">asked q2<\/span><pre>unanswered<\/pre><span class="role">answer<\/span><p>none<\/p>/,
  );
  assert.match(html, /<span class="del">- old<\/span><span class="add">\+ new<\/span>/);
  assert.match(html, /<h3>\/out\/same.txt<\/h3><p>Unchanged from the fixture.<\/p>/);
  assert.match(html, /<a href="\/experiment\?id=[^"&]+&amp;token=tok">/);
});

Deno.test("lineDiff() keeps, removes and adds lines, folding unchanged runs far from a change", () => {
  assert.deepEqual(lineDiff("a\nb\n", "a\nb\n"), []);
  assert.deepEqual(lineDiff("a\nb\nc\n", "a\nx\nc\n"), [
    { op: " ", text: "a" },
    { op: "-", text: "b" },
    { op: "+", text: "x" },
    { op: " ", text: "c" },
  ]);
  const before = Array.from({ length: 20 }, (_, i) => `l${i}`).join("\n");
  const after = before.replace("l10", "L10");
  const d = lineDiff(before, after);
  assert.deepEqual(d[0], { op: "…", folded: 7 });
  assert.deepEqual(d.at(-1), { op: "…", folded: 6 });
  assert.equal(d.filter((l) => l.op === " ").length, 6);
  // Too big for the table: replaced whole, still right.
  const big = Array.from({ length: 3000 }, (_, i) => `${i}`).join("\n");
  const other = Array.from({ length: 3000 }, (_, i) => `x${i}`).join("\n");
  const whole = lineDiff(big, other);
  assert.equal(whole.filter((l) => l.op === "-").length, 3000);
  assert.equal(whole.filter((l) => l.op === "+").length, 3000);
  assert.deepEqual(lineDiff("", "new\n"), [{ op: "+", text: "new" }]);
});
