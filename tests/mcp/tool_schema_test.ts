import assert from "node:assert/strict";
import { z } from "zod";
import { allOps } from "../../core/ops/registry.ts";
import { defineOp, type Op } from "../../core/ops/op.ts";
import { defineFormat } from "../../core/json_format.ts";

const X_FORMAT = defineFormat("x", 1, "x", z.object({}));
import {
  annotationsOf,
  toolDefinition,
  toolInputSchema,
  toolProblems,
} from "../../mcp/tool_schema.ts";

function op(input: z.ZodObject, over: Partial<Op> = {}): Op {
  return defineOp({
    name: "x_op",
    title: "X",
    description: "x",
    kind: "read",
    toolset: "t",
    input,
    output: X_FORMAT,
    handler: () => Promise.resolve({}),
    ...over,
  }) as Op;
}

Deno.test("every registered op is a tool with a valid name and a flat, closed schema", () => {
  const ops = allOps();
  assert.ok(ops.length >= 20);
  for (const o of ops) {
    for (const pinned of [false, true]) {
      const t = toolDefinition(o, { pinnedRoom: pinned });
      assert.deepEqual(toolProblems(t), [], `${o.name}${pinned ? " (pinned)" : ""}`);
      assert.equal(t.inputSchema.$schema, undefined);
    }
    assert.ok(o.description.length > 20, `${o.name} says what it promises`);
  }
  assert.equal(new Set(ops.map((o) => o.name)).size, ops.length, "names are unique");
});

Deno.test("toolInputSchema() makes defaults optional and leaves out room when pinned", () => {
  const o = op(z.strictObject({
    room: z.string(),
    n: z.number().int().min(0).max(10).default(3),
    tags: z.array(z.string()).optional(),
    files: z.record(z.string(), z.string().nullable()),
  }));
  const s = toolInputSchema(o);
  assert.deepEqual(s.required, ["room", "files"]);
  assert.equal(s.additionalProperties, false);
  const files = (s.properties as Record<string, Record<string, unknown>>).files;
  assert.deepEqual(files, { type: "object", additionalProperties: { type: ["string", "null"] } });
  const pinned = toolInputSchema(o, { pinnedRoom: true });
  assert.ok(!("room" in (pinned.properties as object)));
  assert.deepEqual(pinned.required, ["files"]);
});

Deno.test("toolProblems() names a bad name, an open schema, unions and nested objects", () => {
  const t = (name: string, inputSchema: Record<string, unknown>) => ({ name, inputSchema });
  assert.deepEqual(toolProblems(t("ok_tool", { type: "object", additionalProperties: false })), []);
  assert.match(
    toolProblems(t("Bad-Name", { type: "object", additionalProperties: false }))[0],
    /Bad-Name/,
  );
  assert.match(toolProblems(t("a", { type: "object" }))[0], /not closed/);
  // A union of primitives is a list of types (flat); one with an object is anyOf.
  const types = toolInputSchema(op(z.strictObject({ v: z.union([z.string(), z.number()]) })));
  assert.deepEqual(toolProblems(t("a", types)), []);
  const union = toolInputSchema(
    op(z.strictObject({ v: z.union([z.string(), z.strictObject({ a: z.string() })]) })),
  );
  assert.ok(toolProblems(t("a", union)).some((p) => /anyOf/.test(p)));
  const nested = toolInputSchema(op(z.strictObject({ o: z.strictObject({ a: z.string() }) })));
  assert.ok(toolProblems(t("a", nested)).some((p) => /"o" is not a primitive/.test(p)));
  const long = "a".repeat(41);
  assert.equal(toolProblems(t(long, { type: "object", additionalProperties: false })).length, 1);
});

Deno.test("annotationsOf() derives hints from the op's kind, idempotence and reach", () => {
  const read = annotationsOf(op(z.strictObject({})));
  assert.deepEqual(read, {
    title: "X",
    readOnlyHint: true,
    destructiveHint: false,
    idempotentHint: true,
    openWorldHint: false,
  });
  const write = annotationsOf(op(z.strictObject({}), { kind: "write", openWorld: true }));
  assert.equal(write.readOnlyHint, false);
  assert.equal(write.destructiveHint, false);
  assert.equal(write.idempotentHint, false);
  assert.equal(write.openWorldHint, true);
  const destructive = annotationsOf(
    op(z.strictObject({}), { kind: "destructive", idempotent: true }),
  );
  assert.equal(destructive.destructiveHint, true);
  assert.equal(destructive.idempotentHint, true);
});
