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

Deno.test("attemptView() shows a command's world gateway: MCP calls and model requests in time order", () => {
  const r = record({ candidate: "claude", evidenceRef: "e" });
  const evidence = {
    candidate: {
      exitCode: 0,
      stdoutTail: "",
      stderrTail: "",
      gateway: {
        stopped: "budget",
        fault: null,
        upstreamProblem: null,
        mcpCalls: [{
          at: 900,
          tool: "read_file",
          args: { path: "/docs/case.txt" },
          resultChars: 13,
          isError: false,
          ms: 1,
        }],
        modelLog: [
          { at: 10, method: "HEAD", path: "/", status: 200 },
          {
            at: 500,
            method: "POST",
            path: "/v1/messages",
            model: "claude-haiku-4-5",
            status: 200,
            usage: { input: 1200, output: 40 },
          },
          { at: 1500, method: "POST", path: "/v1/messages", status: 400, refused: "budget" },
        ],
      },
      agent: { cli: "claude-code", result: { subtype: "success", result: "Done.\nmore" } },
    },
  };
  const v = attemptView(r, evidence);
  assert.deepEqual(v.gateway?.events.map((e) => e.at), [10, 500, 900, 1500]);
  const text = attemptText(v);
  assert.match(text, /Gateway {4}2 model requests, 1 MCP calls; stopped: budget/);
  assert.match(text, /0\.5 s {2}POST \/v1\/messages claude-haiku-4-5 → 200 \(1200 in, 40 out\)/);
  assert.match(text, /0\.9 s {2}mcp read_file \{"path":"\/docs\/case\.txt"\} → 13 characters/);
  assert.match(text, /1\.5 s {2}POST \/v1\/messages → 400 refused: budget/);
  assert.match(text, /claude-code result: "success" — Done\.\n/);
});
