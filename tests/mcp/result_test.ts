import assert from "node:assert/strict";
import { DvergrError } from "../../core/errors.ts";
import { z } from "zod";
import { cutNote, errorResult, RESULT_LIMIT, toolResult } from "../../mcp/result.ts";
import { defineFormat } from "../../core/json_format.ts";

const F = defineFormat("x", 1, "x", z.looseObject({}));

Deno.test("toolResult() gives JSON text and the same document (format first) as structuredContent", () => {
  const r = toolResult({ a: 1, b: ["x"] }, F);
  assert.deepEqual(r.structuredContent, { format: "dvergr-x/1", a: 1, b: ["x"] });
  assert.deepEqual(Object.keys(r.structuredContent!), ["format", "a", "b"]);
  assert.deepEqual(JSON.parse(r.content[0].text), r.structuredContent);
  assert.equal(r.isError, undefined);
  assert.deepEqual(toolResult(undefined, F).structuredContent, {
    format: "dvergr-x/1",
    value: null,
  });
});

Deno.test("toolResult() cuts text over 60,000 characters with a note, structuredContent too", () => {
  const big = { text: "x".repeat(70_000) };
  const n = JSON.stringify({ format: "dvergr-x/1", ...big }).length;
  const r = toolResult(big, F);
  const text = r.content[0].text;
  assert.ok(text.startsWith('{"format":"dvergr-x/1","text":"xxx'));
  assert.ok(text.endsWith(cutNote(n)));
  assert.equal(
    cutNote(n),
    `[dvergr: result cut at 60000 of ${n} chars; ask for less, e.g. a limit or a detail op]`,
  );
  assert.equal(text.length, RESULT_LIMIT + 1 + cutNote(n).length);
  assert.equal(r.structuredContent?.format, "dvergr-cut/1");
  assert.equal(r.structuredContent?.cut, true);
  assert.equal(r.structuredContent?.of, "dvergr-x/1");
  assert.equal(r.structuredContent?.chars, n);
  // Just at the limit, nothing is cut.
  const exact = { t: "y".repeat(RESULT_LIMIT - 8 - '"format":"dvergr-x/1",'.length) };
  assert.equal(JSON.stringify({ format: "dvergr-x/1", ...exact }).length, RESULT_LIMIT);
  assert.deepEqual(toolResult(exact, F).structuredContent, { format: "dvergr-x/1", ...exact });
});

Deno.test("errorResult() carries a DvergrError's code, message, hint and details", () => {
  const r = errorResult(
    new DvergrError("NOT_FOUND", 'Room "x" has no bundle "y"', {
      hint: "Its bundles: a",
      details: { room: "x" },
    }),
  );
  assert.equal(r.isError, true);
  assert.deepEqual(r.structuredContent, {
    format: "dvergr-error/1",
    error: {
      code: "NOT_FOUND",
      message: 'Room "x" has no bundle "y"',
      hint: "Its bundles: a",
      details: { room: "x" },
    },
  });
  assert.deepEqual(JSON.parse(r.content[0].text), r.structuredContent);
});

Deno.test("errorResult() reports anything else as INTERNAL with a hint", () => {
  const r = errorResult(new TypeError("x is undefined"));
  const e = (r.structuredContent as { error: Record<string, string> }).error;
  assert.equal(e.code, "INTERNAL");
  assert.match(e.message, /x is undefined/);
  assert.match(e.hint, /bug/);
});
