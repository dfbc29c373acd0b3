/**
 * Runs a js_eval program in its own permission-less Worker (sandbox/js_eval_worker.ts) and
 * answers its op calls with `call` (which holds all its authority: the sandbox reaches
 * nothing else). The time limit covers the whole program, op calls included: QuickJS is
 * interrupted at the deadline, and a worker that does not answer shortly after is stopped.
 *
 * Permissions: none for the worker; the host needs what `call`'s ops need.
 */
import { DvergrError, isDvergrError } from "../core/errors.ts";
import type { EvalDone, EvalToHost, HostToEval } from "./js_eval_protocol.ts";

/** As for checkers (sandbox/checker_pool.ts): 20 s and a 256 MiB wasm memory. */
export const JS_EVAL_TIMEOUT_MS = 20_000;
export const JS_EVAL_MEMORY_BYTES = 256 * 1024 * 1024;
/** Op calls one program may make. */
export const MAX_OP_CALLS = 1_000;
/** Time for loading QuickJS (not the program's) and for a worker to answer its deadline. */
const START_MS = 30_000;
const MARGIN_MS = 2_000;

export interface JsEvalOptions {
  /** The op names reachable as ops.<name>(args). */
  ops: string[];
  /** Runs an op for the program (validation and authority are the caller's). */
  call(op: string, args: unknown): Promise<unknown>;
  timeoutMs?: number;
  memoryBytes?: number;
  signal?: AbortSignal;
}

export type JsEvalResult =
  | { ok: true; value: unknown; logs: string[]; calls: number; ms: number }
  | { ok: false; error: string; logs: string[]; calls: number; ms: number };

/** Runs `code` and reports its value (or why it failed) with its console lines. */
export function runJsEval(code: string, opts: JsEvalOptions): Promise<JsEvalResult> {
  const started = performance.now();
  const timeoutMs = opts.timeoutMs ?? JS_EVAL_TIMEOUT_MS;
  const worker = new Worker(new URL("./js_eval_worker.ts", import.meta.url).href, {
    type: "module",
    deno: { permissions: "none" },
  });
  const allowed = new Set(opts.ops);
  let calls = 0;
  let ended = false;
  return new Promise<JsEvalResult>((resolve) => {
    const end = (done: Omit<EvalDone, "type">) => {
      if (ended) return;
      ended = true;
      clearTimeout(timer);
      opts.signal?.removeEventListener("abort", onAbort);
      worker.terminate();
      const ms = Math.round(performance.now() - started);
      if (done.ok) {
        resolve({
          ok: true,
          value: done.json === null ? null : JSON.parse(done.json),
          logs: done.logs,
          calls,
          ms,
        });
      } else resolve({ ok: false, error: done.error ?? "failed", logs: done.logs, calls, ms });
    };
    // Loading QuickJS is not the program's time; the worker's own deadline starts after it.
    const timer = setTimeout(
      () => end({ ok: false, json: null, error: "Your program ran out of time", logs: [] }),
      START_MS + timeoutMs + MARGIN_MS,
    );
    const onAbort = () => end({ ok: false, json: null, error: "The call was cancelled", logs: [] });
    opts.signal?.addEventListener("abort", onAbort, { once: true });
    const post = (m: HostToEval) => {
      if (!ended) worker.postMessage(m);
    };
    worker.onerror = (e) => {
      e.preventDefault();
      end({ ok: false, json: null, error: `The sandbox failed: ${e.message}`, logs: [] });
    };
    worker.onmessage = async (event: MessageEvent<EvalToHost>) => {
      const msg = event.data;
      if (msg.type === "done") {
        end(msg);
        return;
      }
      if (msg.type !== "call") return;
      calls++;
      let reply: HostToEval;
      try {
        if (!allowed.has(msg.op)) {
          throw new DvergrError("USAGE", `ops.${msg.op} is not an op of this connection`);
        }
        if (calls > MAX_OP_CALLS) {
          throw new DvergrError("USAGE", `A program makes at most ${MAX_OP_CALLS} op calls`);
        }
        const value = await opts.call(msg.op, JSON.parse(msg.args));
        reply = { type: "reply", id: msg.id, ok: true, json: JSON.stringify(value ?? null) };
      } catch (e) {
        const error = isDvergrError(e)
          ? { code: e.code, message: e.message, ...(e.hint ? { hint: e.hint } : {}) }
          : { code: "INTERNAL", message: e instanceof Error ? e.message : String(e) };
        reply = { type: "reply", id: msg.id, ok: false, json: JSON.stringify(error) };
      }
      post(reply);
    };
    post({
      type: "run",
      code,
      ops: opts.ops,
      timeoutMs,
      memoryBytes: opts.memoryBytes ?? JS_EVAL_MEMORY_BYTES,
    });
  });
}
