/**
 * One checker call in a fresh QuickJS runtime and context: prelude (with `edn`), input,
 * checker.js as a module, the export called, its result settled and serialised. Nothing
 * survives the call: the runtime is disposed at the end, whatever happened.
 *
 * Runs inside the checker worker (no permissions); takes a loaded QuickJS module.
 */
import type {
  QuickJSContext,
  QuickJSHandle,
  QuickJSRuntime,
  QuickJSWASMModule,
} from "quickjs-emscripten-core";
import type { CallOutcome, CheckerFunction } from "./protocol.ts";
import { PRELUDE_SOURCE } from "./prelude.ts";
import { LOOP_GUARD_SOURCE } from "./loop_guard.ts";
import { ednBridge } from "./edn_bridge.ts";
import type { CheckerFault } from "../core/checker.ts";

export interface CallSetup {
  /** QuickJS heap limit (setMemoryLimit), in bytes. */
  memoryLimitBytes: number;
  /** The hard cap of the wasm memory, for messages. */
  memoryCapBytes: number;
  /** The wasm memory's current size (it only grows). */
  wasmBytes: () => number;
  stackBytes: number;
}

export interface CallRequest {
  fn: CheckerFunction;
  source: string;
  input: string;
  timeoutMs: number;
}

export interface CallReport {
  outcome: CallOutcome;
  logs: string[];
  /** The wasm instance misbehaved (a trap, a failed dispose): do not reuse it. */
  poisoned: boolean;
}

/** Lines and characters of console output kept per call. */
export const MAX_LOG_LINES = 100;
export const MAX_LOG_LINE_CHARS = 2_000;
/** Largest result accepted from checker.js, as JSON text. */
export const MAX_RESULT_CHARS = 4 * 1024 * 1024;
/** Time given to reading a thrown value (its getters are checker code). */
const DESCRIBE_MS = 250;
const JOB_BATCH = 256;

type Phase = "setup" | "module" | "call" | "result";

interface Described {
  kind: string;
  isError: boolean;
  name?: string;
  message?: string;
  stack?: string;
  text?: string;
}

/** A fault found while running; thrown inside this file only, returned as a value. */
class Fault {
  constructor(readonly fault: CheckerFault, readonly message: string) {}
}

/**
 * Runs `req.fn` of checker source `req.source` on `req.input` in a fresh runtime and
 * reports a JSON result or a fault. Never throws for anything the checker does; a
 * misbehaving wasm instance is reported as `poisoned` with a "crashed" fault.
 */
export function runCheckerCall(
  module: QuickJSWASMModule,
  setup: CallSetup,
  req: CallRequest,
): CallReport {
  const logs: string[] = [];
  let rt: QuickJSRuntime | undefined;
  let call: CheckerCall | undefined;
  let outcome: CallOutcome;
  let poisoned = false;
  try {
    rt = module.newRuntime();
    call = new CheckerCall(rt, setup, req, logs);
    outcome = call.run();
  } catch (e) {
    // Anything reaching here is the wasm instance or the bindings failing, not checker
    // code: most often the host stack overflowing inside QuickJS's native recursion
    // (deeply nested source or data) before QuickJS's own stack check fires.
    poisoned = true;
    const stack = e instanceof RangeError && /call stack/i.test(e.message);
    outcome = {
      ok: false,
      fault: "crashed",
      message: `The sandbox crashed while running the checker: ${errorText(e)}${
        stack ? " (too deeply nested code or data?)" : ""
      }`,
    };
  }
  // A poisoned instance is not disposed: its state is unknown, and its worker is replaced.
  if (!poisoned) {
    try {
      call?.dispose();
      rt?.dispose();
    } catch (e) {
      poisoned = true;
      if (outcome.ok) {
        outcome = {
          ok: false,
          fault: "crashed",
          message: `The sandbox crashed while releasing the checker: ${errorText(e)}`,
        };
      }
    }
  }
  return { outcome, logs, poisoned };
}

class CheckerCall {
  private readonly ctx: QuickJSContext;
  private readonly handles: QuickJSHandle[] = [];
  private deadline: number;
  private interrupted = false;
  private readonly refusedImports: string[] = [];
  private helpers?: {
    parse: QuickJSHandle;
    serialize: QuickJSHandle;
    describe: QuickJSHandle;
  };
  private readonly who: string;

  constructor(
    private readonly rt: QuickJSRuntime,
    private readonly setup: CallSetup,
    private readonly req: CallRequest,
    private readonly logs: string[],
  ) {
    this.deadline = Date.now() + req.timeoutMs;
    rt.setMemoryLimit(setup.memoryLimitBytes);
    rt.setMaxStackSize(setup.stackBytes);
    rt.setInterruptHandler(() => {
      if (Date.now() < this.deadline) return false;
      this.interrupted = true;
      return true;
    });
    rt.setModuleLoader((name) => {
      this.refusedImports.push(name);
      return {
        error: new Error(
          `checker.js cannot import "${name}": the sandbox loads no modules`,
        ),
      };
    });
    this.ctx = rt.newContext();
    this.who = req.fn === "check" ? "The checker" : "The checker's judgeRequests";
  }

  run(): CallOutcome {
    try {
      return { ok: true, json: this.runSteps() };
    } catch (e) {
      if (e instanceof Fault) return { ok: false, fault: e.fault, message: e.message };
      throw e;
    }
  }

  dispose(): void {
    for (const h of this.handles.reverse()) if (h.alive) h.dispose();
    this.ctx.dispose();
  }

  private keep(h: QuickJSHandle): QuickJSHandle {
    this.handles.push(h);
    return h;
  }

  private runSteps(): string {
    const { ctx } = this;
    this.refuseOversized();
    const helpers = this.installPrelude();

    const inputText = this.keep(ctx.newString(this.req.input));
    const parsed = ctx.callFunction(helpers.parse, ctx.undefined, inputText);
    if (parsed.error) this.failWith(this.keep(parsed.error), "setup");
    const input = this.keep(parsed.value);

    const evaluated = ctx.evalCode(this.req.source, "checker.js", { type: "module" });
    if (evaluated.error) this.failWith(this.keep(evaluated.error), "module");
    const exports = this.settle(this.keep(evaluated.value), "module");

    const fn = this.keep(ctx.getProp(exports, this.req.fn));
    const fnType = ctx.typeof(fn);
    if (fnType !== "function") {
      if (this.req.fn === "judgeRequests" && fnType === "undefined") return "[]";
      const onlyDefault = fnType === "undefined" &&
        ctx.typeof(this.keep(ctx.getProp(exports, "default"))) === "function";
      throw new Fault(
        "no-check",
        fnType === "undefined"
          ? `checker.js exports no \`${this.req.fn}\` function${
            onlyDefault
              ? ` (it has a default export; export the function by name: \`export function ${this.req.fn}(input)\`)`
              : ""
          }`
          : `checker.js exports \`${this.req.fn}\` but it is ${article(fnType)}, not a function`,
      );
    }

    const called = ctx.callFunction(fn, ctx.undefined, input);
    if (called.error) this.failWith(this.keep(called.error), "call");
    const result = this.settle(this.keep(called.value), "call");

    const serialized = ctx.callFunction(helpers.serialize, ctx.undefined, result);
    if (serialized.error) this.failWith(this.keep(serialized.error), "result");
    const text = this.keep(serialized.value);
    if (ctx.typeof(text) !== "string") {
      // JSON.stringify gives undefined only for undefined, functions and symbols at the
      // top, and the replacer turns those into marks, so this is defensive.
      return JSON.stringify({ "\u0000dvergr": ctx.typeof(text) });
    }
    const length = ctx.getNumber(this.keep(ctx.getProp(text, "length")));
    if (length > MAX_RESULT_CHARS) {
      throw new Fault(
        "invalid-verdict",
        `${this.noResult()}: it is too large (${length} characters as JSON; the limit is ${MAX_RESULT_CHARS})`,
      );
    }
    // A call can overrun its deadline inside native code that never polls the interrupt
    // handler (a long typed-array sort); finishing late is still not finishing in time.
    if (Date.now() > this.deadline) throw this.timeout();
    return ctx.getString(text);
  }

  /**
   * Text is copied into wasm memory as UTF-8 before QuickJS sees it; text that cannot fit
   * would make the allocation fail outside QuickJS's own checks, so it is refused first.
   */
  private refuseOversized(): void {
    const max = Math.floor(this.setup.memoryLimitBytes / 4);
    for (const [what, text] of [["input", this.req.input], ["source", this.req.source]]) {
      if (text.length > max) {
        throw new Fault(
          "memory",
          `The checker's ${what} is too large for the sandbox: ${text.length} characters ` +
            `(at most ${max} fit in its ${mib(this.setup.memoryCapBytes)})`,
        );
      }
    }
  }

  private installPrelude() {
    const { ctx } = this;
    const logFn = this.keep(ctx.newFunction("hostLog", (line) => {
      if (this.logs.length < MAX_LOG_LINES && ctx.typeof(line) === "string") {
        this.logs.push(ctx.getString(line).slice(0, MAX_LOG_LINE_CHARS));
      }
    }));
    const ednFn = this.keep(ctx.newFunction("hostEdn", (op, text, arg) => {
      if (Date.now() >= this.deadline) {
        // Past the deadline the call is over whatever the checker does with the error:
        // QuickJS may not poll the interrupt handler for another 10,000 iterations, so
        // each of them must be quick (not even the text is copied out).
        this.interrupted = true;
        const name = ctx.typeof(op) === "string" ? ctx.getString(op).slice(0, 20) : "";
        return ctx.newString(ednBridge(name, "", "", this.deadline));
      }
      if (
        ctx.typeof(op) !== "string" || ctx.typeof(text) !== "string" ||
        ctx.typeof(arg) !== "string"
      ) {
        return ctx.newString('{"error":{"name":"TypeError","message":"edn needs strings"}}');
      }
      const answer = ednBridge(
        ctx.getString(op),
        ctx.getString(text),
        ctx.getString(arg),
        this.deadline,
      );
      if (Date.now() >= this.deadline) this.interrupted = true;
      return ctx.newString(answer);
    }));
    const factory = ctx.evalCode(PRELUDE_SOURCE, "prelude.js", { type: "global" });
    if (factory.error) this.failWith(this.keep(factory.error), "setup");
    const made = ctx.callFunction(this.keep(factory.value), ctx.undefined, logFn, ednFn);
    if (made.error) this.failWith(this.keep(made.error), "setup");
    const obj = this.keep(made.value);
    const guard = ctx.evalCode(LOOP_GUARD_SOURCE, "loop_guard.js", { type: "global" });
    if (guard.error) this.failWith(this.keep(guard.error), "setup");
    this.keep(guard.value);
    this.helpers = {
      parse: this.keep(ctx.getProp(obj, "parse")),
      serialize: this.keep(ctx.getProp(obj, "serialize")),
      describe: this.keep(ctx.getProp(obj, "describe")),
    };
    return this.helpers;
  }

  /** Runs pending jobs until `h` (a promise or not) settles; returns the settled value. */
  private settle(h: QuickJSHandle, phase: Phase): QuickJSHandle {
    const { ctx, rt } = this;
    for (;;) {
      const state = ctx.getPromiseState(h);
      if (state.type === "fulfilled") {
        return state.notAPromise ? h : this.keep(state.value);
      }
      if (state.type === "rejected") this.failWith(this.keep(state.error), phase);
      if (Date.now() >= this.deadline) {
        this.interrupted = true;
        throw this.timeout();
      }
      if (!rt.hasPendingJob()) {
        throw new Fault(
          "timeout",
          phase === "module"
            ? "checker.js never finished loading: its top-level await waits for a promise " +
              "that nothing can settle (the sandbox has no timers or I/O)"
            : `${this.who} returned a promise that never settles: nothing is left to run ` +
              "(the sandbox has no timers or I/O)",
        );
      }
      const ran = rt.executePendingJobs(JOB_BATCH);
      if (ran.error) this.failWith(this.keep(ran.error), phase);
    }
  }

  private timeout(): Fault {
    return new Fault("timeout", `The checker did not finish within ${this.req.timeoutMs}ms`);
  }

  private noResult(): string {
    return this.req.fn === "check"
      ? "The checker returned no verdict"
      : "judgeRequests returned no requests";
  }

  /** Turns a thrown value into the fault it means; never returns. */
  private failWith(error: QuickJSHandle, phase: Phase): never {
    if (this.interrupted) throw this.timeout();
    const d = this.describe(error);
    if (this.interrupted) throw this.timeout();
    const name = d.name ?? "";
    const message = d.message ?? "";
    const where = checkerLine(d.stack);
    // When not even the "out of memory" error can be allocated, QuickJS throws null; a
    // memory that grew to near its cap tells that null from a checker's own `throw null`.
    const exhausted = (name === "InternalError" &&
      ["out of memory", "string too long"].includes(message)) ||
      (d.kind === "null" && this.setup.wasmBytes() >= 0.75 * this.setup.memoryCapBytes);
    if (phase === "setup") {
      const stack = name === "InternalError" && message === "stack overflow";
      throw new Fault(
        exhausted || stack ? "memory" : "crashed",
        `The sandbox could not prepare the checker's input: ${shown(d)}`,
      );
    }
    if (exhausted) {
      throw new Fault(
        "memory",
        `${this.who} ran out of memory (the sandbox allows ${mib(this.setup.memoryCapBytes)}: ${
          message || "out of memory"
        })${where}`,
      );
    }
    if (name === "InternalError" && message === "stack overflow") {
      throw new Fault(
        "memory",
        `${this.who} overflowed its stack (the sandbox allows ${
          this.setup.stackBytes / 1024
        } KiB; ` +
          `too deep a recursion?)${where}`,
      );
    }
    if (phase === "module" && name === "SyntaxError") {
      throw new Fault("syntax", `checker.js has a syntax error: ${message}${where}`);
    }
    if (phase === "module" && this.refusedImports.length > 0) {
      throw new Fault(
        "syntax",
        `checker.js cannot import ${this.refusedImports.map((n) => `"${n}"`).join(", ")}: ` +
          "a checker must be self-contained (the sandbox loads no modules; `edn` is a global)",
      );
    }
    if (phase === "result") {
      throw new Fault(
        "invalid-verdict",
        `${this.noResult()}: it cannot be read as JSON: ${shown(d)}`,
      );
    }
    const during = phase === "module" ? "checker.js threw while loading" : `${this.who} threw`;
    throw new Fault("threw", `${during} ${shown(d)}${where}`);
  }

  /** Reads a thrown value inside the sandbox, with a short budget of its own. */
  private describe(error: QuickJSHandle): Described {
    const { ctx } = this;
    const helpers = this.helpers;
    if (!helpers) return { kind: "unknown", isError: false, text: "(before the prelude)" };
    const saved = this.deadline;
    this.deadline = Date.now() + DESCRIBE_MS;
    try {
      const r = ctx.callFunction(helpers.describe, ctx.undefined, error);
      if (r.error) {
        this.keep(r.error);
        this.interrupted = false;
        return { kind: "unknown", isError: false };
      }
      const text = this.keep(r.value);
      if (ctx.typeof(text) !== "string") return { kind: "unknown", isError: false };
      return JSON.parse(ctx.getString(text)) as Described;
    } finally {
      this.deadline = saved;
    }
  }
}

function shown(d: Described): string {
  if (d.isError || (d.name !== undefined && d.message !== undefined)) {
    const head = d.name && d.name !== "undefined" ? d.name : "Error";
    return d.message ? `${head}: ${clip(d.message)}` : head;
  }
  if (d.kind === "null" || d.kind === "undefined") return `a non-Error value: ${d.kind}`;
  if (d.text !== undefined) {
    return `a non-Error value: ${clip(d.kind === "string" ? JSON.stringify(d.text) : d.text)}`;
  }
  return `a value that cannot be shown`;
}

/** " (checker.js line 3, column 7)" from the first checker.js frame of a stack, or "". */
function checkerLine(stack: string | undefined): string {
  const m = /checker\.js:(\d+)(?::(\d+))?/.exec(stack ?? "");
  if (!m) return "";
  return m[2] ? ` (checker.js line ${m[1]}, column ${m[2]})` : ` (checker.js line ${m[1]})`;
}

function clip(s: string, max = 500): string {
  return s.length > max ? `${s.slice(0, max)}…` : s;
}

function mib(bytes: number): string {
  return `${Math.round(bytes / (1024 * 1024))} MiB`;
}

function article(type: string): string {
  return /^[aeiou]/.test(type) ? `an ${type}` : `a ${type}`;
}

function errorText(e: unknown): string {
  return e instanceof Error ? `${e.name}: ${e.message}` : String(e);
}
