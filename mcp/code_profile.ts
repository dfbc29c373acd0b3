/**
 * The code profile (`--profile code`): two tools instead of many. `js_eval {code}` runs a
 * JavaScript program in the QuickJS sandbox where `ops.<name>(args)` calls every op of the
 * profile's reach (the bench profile's ops), validated by the op's schema and with exactly
 * the connection's authority, so a client writes one program where it would chain ten tool
 * calls; its console output comes back with its value. `describe {query?}` lists those ops
 * with their schemas and documentation.
 */
import { z } from "zod";
import { DvergrError } from "../core/errors.ts";
import { defineOp, explainedOp, type Op } from "../core/ops/op.ts";
import { callOp } from "../core/ops/registry.ts";
import { toolInputSchema } from "./tool_schema.ts";
import { defineFormat } from "../core/json_format.ts";

export const JS_EVAL_FORMAT = defineFormat(
  "js-eval",
  1,
  "What a js_eval program returned, with its console output.",
  z.object({
    value: z.unknown().describe("The program's value"),
    logs: z.array(z.string()),
    calls: z.number().int().describe("Op calls the program made"),
    ms: z.number(),
  }),
);

export const DESCRIBE_FORMAT = defineFormat(
  "describe",
  1,
  "The ops a js_eval program can call, with their parameters and result formats (describe).",
  z.object({
    count: z.number().int(),
    ops: z.array(z.object({
      name: z.string(),
      call: z.string(),
      title: z.string(),
      kind: z.enum(["read", "write", "destructive"]),
      toolset: z.string(),
      description: z.string(),
      inputSchema: z.record(z.string(), z.unknown()).describe("Its parameters (JSON Schema)"),
      format: z.string().describe("The format of its result (schemas/ has each)"),
    })),
  }),
);

/** The outcome of a js_eval program (sandbox/js_eval.ts makes it). */
export type JsEvalOutcome =
  | { ok: true; value: unknown; logs: string[]; calls: number; ms: number }
  | { ok: false; error: string; logs: string[]; calls: number; ms: number };

/**
 * Runs a program in the sandbox, answering its op calls with `call` (sandbox/js_eval.ts's
 * runJsEval; given by the CLI, since the mcp layer does not import the sandbox).
 */
export type JsEvalRunner = (code: string, opts: {
  ops: string[];
  call(op: string, args: unknown): Promise<unknown>;
  timeoutMs?: number;
  signal?: AbortSignal;
}) => Promise<JsEvalOutcome>;

/** The ops each code-profile op reaches (for the checks that a selection stays in bounds). */
const REACH = new WeakMap<Op, string[]>();

/** The op names an op reaches: its own, or for js_eval and describe, those of its profile. */
export function reachOf(op: Op): string[] {
  return REACH.get(op) ?? [op.name];
}

/** The ops whose name, title, description or toolset hold every word of `query`. */
export function describeOps(ops: Op[], query?: string) {
  const words = (query ?? "").toLowerCase().split(/\s+/).filter(Boolean);
  return ops
    .filter((o) => {
      const text = `${o.name} ${o.title} ${o.description} ${o.toolset}`.toLowerCase();
      return words.every((w) => text.includes(w));
    })
    .map((o) => ({
      name: o.name,
      call: `await ops.${o.name}({…})`,
      title: o.title,
      kind: o.kind,
      toolset: o.toolset,
      description: o.description,
      inputSchema: toolInputSchema(o),
      format: o.output.id,
    }));
}

/** js_eval and describe over `inner`, the ops their programs may call. */
export function codeOps(inner: Op[], runJsEval: JsEvalRunner): Op[] {
  const byName = new Map(inner.map((o) => [o.name, o]));
  const names = inner.map((o) => o.name);
  const jsEval = defineOp({
    name: "js_eval",
    title: "Run a JavaScript program over the ops",
    description:
      `Runs a JavaScript program in a sandbox (QuickJS, no files, network or host objects; 20 s and 256 MiB as for checkers) where \`await ops.<name>(args)\` calls an op and returns its result (an op's error is thrown, with its code and hint). The program is one expression (its value is returned) or the body of an async function (\`return\` gives the value). Its console output is returned with the value. Ops: ${
        names.join(", ")
      }. Use describe for their parameters.`,
    kind: "destructive",
    toolset: "code",
    output: JS_EVAL_FORMAT,
    input: z.strictObject({
      code: z.string().min(1).max(200_000).describe(
        "e.g. `const r = await ops.room_list({}); return r.rooms.map((x) => x.room)`",
      ),
      timeout_ms: z.number().int().min(100).max(120_000).optional().describe(
        "Time for the whole program, op calls included (default 20000)",
      ),
    }),
    async handler(ctx, input) {
      const r = await runJsEval(input.code, {
        ops: names,
        timeoutMs: input.timeout_ms,
        signal: ctx.signal,
        // The connection's context, without its progress reporting: the program is the call.
        call: (name, args) => callOp(byName.get(name)!, { ...ctx, progress: undefined }, args),
      });
      if (!r.ok) {
        throw new DvergrError("EVAL_FAILED", r.error, {
          hint: "Fix the program; console output so far is in details.logs",
          details: { logs: r.logs, calls: r.calls, ms: r.ms },
          result: true,
        });
      }
      return { value: r.value, logs: r.logs, calls: r.calls, ms: r.ms };
    },
  });
  const describe = defineOp({
    name: "describe",
    title: "Describe the ops a program can call",
    description:
      "Lists the ops js_eval's programs can call (`ops.<name>(args)`) with their parameters (JSON Schema), kind and documentation; only those whose name or documentation holds every word of `query` when given.",
    kind: "read",
    toolset: "code",
    idempotent: true,
    output: DESCRIBE_FORMAT,
    input: z.strictObject({
      query: z.string().optional().describe("Words to look for, e.g. `room file`"),
    }),
    handler(ctx, input) {
      const ops = describeOps(inner.map((o) => explainedOp(o, ctx.services)), input.query);
      return Promise.resolve({ count: ops.length, ops });
    },
  });
  for (const op of [jsEval, describe]) REACH.set(op as unknown as Op, names);
  return [jsEval as unknown as Op, describe as unknown as Op];
}
