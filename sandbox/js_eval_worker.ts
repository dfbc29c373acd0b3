/**
 * js_eval's sandbox: a Deno Worker with `permissions: "none"` that runs one JavaScript
 * program in a fresh QuickJS runtime (bounded wasm memory, a heap limit, a stack limit, an
 * interrupt at the deadline). The program is the body of an async function (or one
 * expression); in it, `ops.<name>(args)` returns a promise of the op's result, asked from
 * the host by message — the only way out. console.* lines are kept and returned.
 *
 * Permissions: none.
 */
/// <reference lib="deno.worker" />
import type { QuickJSContext, QuickJSHandle, QuickJSRuntime } from "quickjs-emscripten-core";
import type { EvalDone, EvalReply, EvalRun, EvalToHost, HostToEval } from "./js_eval_protocol.ts";
import { loadQuickJS } from "./quickjs_load.ts";

/** Console lines and characters kept. */
const MAX_LOG_LINES = 200;
const MAX_LOG_LINE_CHARS = 2_000;
/** Largest JSON text of the program's value or of an op's arguments. */
const MAX_JSON_CHARS = 4 * 1024 * 1024;
/** QuickJS stack (DESIGN.md: deeper overflows the host stack). */
const STACK_BYTES = 128 * 1024;

const send = (m: EvalToHost) => self.postMessage(m);

interface Pending {
  resolve(h: QuickJSHandle): void;
  reject(h: QuickJSHandle): void;
}

class Run {
  rt!: QuickJSRuntime;
  ctx!: QuickJSContext;
  logs: string[] = [];
  deadline = 0;
  interrupted = false;
  nextId = 1;
  pending = new Map<number, { deferred: ReturnType<QuickJSContext["newPromise"]> } & Pending>();
  result?: QuickJSHandle;
  finished = false;
  jsonParse!: QuickJSHandle;
  jsonStringify!: QuickJSHandle;

  async start(msg: EvalRun): Promise<void> {
    const q = await loadQuickJS(msg.memoryBytes);
    this.deadline = Date.now() + msg.timeoutMs;
    const rt = this.rt = q.module.newRuntime();
    rt.setMemoryLimit(q.heapLimitBytes);
    rt.setMaxStackSize(STACK_BYTES);
    rt.setInterruptHandler(() => {
      if (Date.now() < this.deadline) return false;
      this.interrupted = true;
      return true;
    });
    rt.setModuleLoader((name) => ({
      error: new Error(`js_eval cannot import "${name}": the sandbox loads no modules`),
    }));
    const ctx = this.ctx = rt.newContext();
    this.jsonParse = ctx.getProp(ctx.getProp(ctx.global, "JSON"), "parse");
    this.jsonStringify = ctx.getProp(ctx.getProp(ctx.global, "JSON"), "stringify");
    this.installConsole();
    this.installOps(msg.ops);
    const program = this.compile(msg.code);
    if (program.error) {
      this.finish(false, null, `Your program does not parse: ${this.describe(program.error)}`);
      return;
    }
    const started = ctx.callFunction(program.value, ctx.undefined);
    program.value.dispose();
    if (started.error) {
      const why = this.describe(started.error);
      this.finish(
        false,
        null,
        this.interrupted ? "Your program ran out of time" : `Your program threw ${why}`,
      );
      return;
    }
    this.result = started.value;
    this.pump();
  }

  /**
   * The program as an async function (not yet called): one expression when it parses as
   * one (its value is the result), else the body of the function (`return` gives it).
   */
  compile(code: string) {
    const asExpression = this.ctx.evalCode(`(async () => (\n${code}\n))`, "program.js");
    if (!asExpression.error) return asExpression;
    asExpression.error.dispose();
    return this.ctx.evalCode(`(async () => {\n${code}\n})`, "program.js");
  }

  installConsole(): void {
    const { ctx } = this;
    const consoleObj = ctx.newObject();
    for (const level of ["log", "info", "warn", "error", "debug"]) {
      const fn = ctx.newFunction(level, (...args) => {
        if (this.logs.length >= MAX_LOG_LINES) return;
        const parts = args.map((a) =>
          ctx.typeof(a) === "string" ? ctx.getString(a) : this.jsonOf(a) ?? String(ctx.dump(a))
        );
        const line = (level === "log" ? "" : `[${level}] `) + parts.join(" ");
        this.logs.push(line.slice(0, MAX_LOG_LINE_CHARS));
      });
      ctx.setProp(consoleObj, level, fn);
      fn.dispose();
    }
    ctx.setProp(ctx.global, "console", consoleObj);
    consoleObj.dispose();
  }

  installOps(names: string[]): void {
    const { ctx } = this;
    const ops = ctx.newObject();
    for (const name of names) {
      const fn = ctx.newFunction(name, (arg) => {
        const json = arg === undefined || ctx.typeof(arg) === "undefined" ? "{}" : this.jsonOf(arg);
        if (json === null) {
          throw ctx.newError(`ops.${name}: its argument must be an object of JSON values`);
        }
        if (json.length > MAX_JSON_CHARS) {
          throw ctx.newError(`ops.${name}: its argument is longer than ${MAX_JSON_CHARS} chars`);
        }
        const deferred = ctx.newPromise();
        const id = this.nextId++;
        this.pending.set(id, {
          deferred,
          resolve: (h) => deferred.resolve(h),
          reject: (h) => deferred.reject(h),
        });
        send({ type: "call", id, op: name, args: json });
        return deferred.handle;
      });
      ctx.setProp(ops, name, fn);
      fn.dispose();
    }
    // Frozen: a program cannot swap an op for something else it then hands around.
    ctx.setProp(ctx.global, "ops", ops);
    const freeze = ctx.evalCode("Object.freeze(ops); undefined");
    if (freeze.error) freeze.error.dispose();
    else freeze.value.dispose();
    ops.dispose();
  }

  /** JSON text of a value made inside the sandbox, or null when it has none. */
  jsonOf(h: QuickJSHandle): string | null {
    const r = this.ctx.callFunction(this.jsonStringify, this.ctx.undefined, h);
    if (r.error) {
      r.error.dispose();
      return null;
    }
    const t = this.ctx.typeof(r.value) === "string" ? this.ctx.getString(r.value) : null;
    r.value.dispose();
    return t;
  }

  describe(err: QuickJSHandle): string {
    const { ctx } = this;
    try {
      const d = ctx.dump(err);
      if (d && typeof d === "object" && "message" in d) {
        const e = d as { name?: string; message?: string };
        return `${e.name ?? "Error"}: ${e.message}`;
      }
      return typeof d === "string" ? d : JSON.stringify(d);
    } catch {
      return "an unreadable value";
    } finally {
      err.dispose();
    }
  }

  reply(msg: EvalReply): void {
    const p = this.pending.get(msg.id);
    if (!p || this.finished) return;
    this.pending.delete(msg.id);
    const { ctx } = this;
    const text = ctx.newString(msg.json);
    const parsed = ctx.callFunction(this.jsonParse, ctx.undefined, text);
    text.dispose();
    if (parsed.error) {
      p.reject(parsed.error);
      parsed.error.dispose();
    } else if (msg.ok) {
      p.resolve(parsed.value);
      parsed.value.dispose();
    } else {
      // An Error whose message is the op's, with its code and hint as properties.
      const info = JSON.parse(msg.json) as { code?: string; message?: string; hint?: string };
      const err = ctx.newError(info.message ?? "the op failed");
      for (const k of ["code", "hint"] as const) {
        if (info[k] !== undefined) {
          const v = ctx.newString(info[k]!);
          ctx.setProp(err, k, v);
          v.dispose();
        }
      }
      p.reject(err);
      err.dispose();
      parsed.value.dispose();
    }
    p.deferred.dispose();
    this.pump();
  }

  /** Runs what is ready; ends the run when the program's promise settled or time is up. */
  pump(): void {
    if (this.finished || !this.result) return;
    const jobs = this.rt.executePendingJobs();
    if (jobs.error) jobs.error.dispose();
    if (this.interrupted || Date.now() >= this.deadline) {
      this.finish(false, null, "Your program ran out of time");
      return;
    }
    const state = this.ctx.getPromiseState(this.result);
    if (state.type === "pending") {
      if (this.pending.size === 0) {
        this.finish(false, null, "Your program waits for something that never comes");
      }
      return;
    }
    if (state.type === "rejected") {
      const why = this.describe(state.error);
      this.finish(
        false,
        null,
        /out of memory/i.test(why) ? "Your program ran out of memory" : `Your program threw ${why}`,
      );
      return;
    }
    const value = state.value;
    const isUndefined = this.ctx.typeof(value) === "undefined";
    const json = isUndefined ? null : this.jsonOf(value);
    value.dispose();
    if (!isUndefined && json === null) {
      this.finish(
        false,
        null,
        "Your program's value is not JSON (a function, a symbol or a cycle)",
      );
    } else if (json !== null && json.length > MAX_JSON_CHARS) {
      this.finish(false, null, `Your program's value is longer than ${MAX_JSON_CHARS} chars`);
    } else this.finish(true, json);
  }

  finish(ok: boolean, json: string | null, error?: string): void {
    if (this.finished) return;
    this.finished = true;
    const done: EvalDone = { type: "done", ok, json, logs: this.logs, ...(error ? { error } : {}) };
    send(done);
  }
}

const run = new Run();
self.onmessage = (event: MessageEvent<HostToEval>) => {
  const msg = event.data;
  try {
    if (msg.type === "run") {
      run.start(msg).catch((e) => run.finish(false, null, `The sandbox failed: ${e}`));
    } else if (msg.type === "reply") run.reply(msg);
  } catch (e) {
    // QuickJS ran out of memory or stack in the host-side glue: the program's fault.
    run.finish(
      false,
      null,
      `Your program broke the sandbox: ${e instanceof Error ? e.message : e}`,
    );
  }
};
