/**
 * The Clojure checker engine: SCI (scittle) inside one QuickJS runtime whose whole state
 * lives in a WebAssembly memory the engine owns, so a copy of that memory is a snapshot
 * of everything: interned vars, namespaces, atoms, patched prototypes, JS globals.
 *
 * - Boot: QuickJS, a console, scittle, the compatibility layer, the loop guard and the glue
 *   (sandbox/sci_boot_source.ts), then the base snapshot (~0.4 s, once per engine).
 * - Prepare (once per checker per engine, keyed by the SHA-256 of checker.clj): restore
 *   the base, evaluate checker.clj, find `check`, `judge-requests` and `generate`
 *   (generator.clj) in the namespace current after it, snapshot again.
 * - Call: restore the checker's snapshot, turn the tagged-JSON input into Clojure data,
 *   call, print the result with `pr-str`. Nothing of one call survives into the next:
 *   every call starts from a restored snapshot.
 *
 * Rules that keep snapshots sound (each one was a bug when broken): the runtime, context
 * and every handle the engine keeps (the context's undefined/global, the glue's
 * functions) exist before the base snapshot; no host functions (`newFunction` keeps
 * their ids in a JavaScript table a restore would not roll back); per-call handles are
 * disposed before the next restore; the interrupt handler and the memory and stack limits
 * are set before the snapshot (sandbox/quickjs_runtime.ts sets these up as the checker.js
 * engine does). Snapshots leave out the C stack and the memory above the heap, which a
 * restore zeroes (sandbox/wasm_snapshot.ts). A
 * host stack overflow inside QuickJS leaves wasm globals (the C stack pointer) outside
 * linear memory in an unknown state: the engine is then poisoned and must be replaced.
 *
 * Host-agnostic: it takes a loaded QuickJS module and its memory, so a Worker or a
 * process can host it. Never throws for anything a checker does.
 */
import type {
  QuickJSContext,
  QuickJSHandle,
  QuickJSRuntime,
  QuickJSWASMModule,
} from "quickjs-emscripten-core";
import type { CallReport, CallRequest, Faulted } from "./protocol.ts";
import { LOOP_GUARD_SOURCE } from "./loop_guard.ts";
import { type MemorySnapshot, SNAPSHOT_PAGE, type SnapshotMemory } from "./wasm_snapshot.ts";
import { clip, errorText, Fault, mib } from "./fault_text.ts";
import {
  imageOf,
  openSnapshotRuntime,
  refuseOversized,
  restoreImage,
  type RuntimeLimits,
} from "./quickjs_runtime.ts";
import type { PreparedCache } from "./quickjs_runtime.ts";
import {
  BEFORE_SCI_JS,
  COMPAT_CLJ,
  COMPAT_JS,
  GLUE_CLJ,
  GLUE_JS,
  MAX_LOG_LINE_CHARS,
  MAX_LOG_LINES,
} from "./sci_boot_source.ts";
import { FAST_EDN_CLJ, FAST_EDN_JS } from "./sci_fast_edn.ts";
import { FAST_CORE_CLJ, FAST_CORE_JS } from "./sci_fast_core.ts";
import { decodeCheckerImage, encodeCheckerImage } from "./sci_image.ts";

export interface SciEngineSetup extends RuntimeLimits {
  /**
   * A boot image (sandbox/sci_image.ts) to restore instead of booting SCI; one that does not
   * fit this module is ignored and SCI boots.
   */
  image?: Uint8Array;
  /** When SCI boots (no image, or one refused): keep its boot image in `image`. */
  keepImage?: boolean;
  /** Prepared checkers kept, at most, by their snapshots' total size; default 64 MiB. */
  preparedBytes?: number;
  /** The clock (`Date.now`); injectable for tests. */
  now?: () => number;
}

export type ClojureFunction = CallRequest["fn"];

/** A call; its input is tagged JSON text (core/edn/tagged.ts). */
export type ClojureCallRequest = CallRequest;

/** The result printed with `pr-str`, or a fault. */
export type ClojureOutcome = { ok: true; edn: string } | Faulted;

export type ClojureCallReport = CallReport<ClojureOutcome>;

/** Largest result accepted, as EDN text. */
export const MAX_RESULT_CHARS = 4 * 1024 * 1024;
const BOOT_TIMEOUT_MS = 120_000;
const DEFAULT_PREPARED_BYTES = 64 * 1024 * 1024;
/** Deterministic load faults remembered per engine, so a broken checker fails fast. */
const MAX_REMEMBERED_FAULTS = 64;

type FnKind = "fn" | "value" | "none";

interface Prepared {
  snapshot: MemorySnapshot;
  ns: string;
  check: FnKind;
  judge: FnKind;
  generate: FnKind;
}

/** One thrown value (and its causes) as the glue describes it. */
interface Described {
  isError: boolean;
  name?: string;
  message?: string;
  line?: number;
  column?: number;
  phase?: string;
  type?: string;
  data?: string;
  text?: string;
}

interface GlueAnswer {
  logs?: string[];
  error?: Described[];
  phase?: "load" | "input" | "call" | "result";
  edn?: string;
  ns?: string;
  check?: FnKind;
  judge?: FnKind;
  generate?: FnKind;
}

/** The SCI engine of one worker; see the module comment. */
export class SciEngine {
  private deadline = Infinity;
  private timeoutMs = 0;
  private interrupted = false;
  /** The file the call in progress runs: checker.clj, or generator.clj for `generate`. */
  private file = "checker.clj";
  private readonly remembered = new Map<string, ClojureOutcome>();
  /** The snapshot the memory is known to equal, if any. */
  private current: MemorySnapshot | null = null;
  /** The key of the prepared checker the last call ran, which settle() restores. */
  private lastKey: string | null = null;
  private poisoned = false;
  private readonly now: () => number;

  private constructor(
    private readonly snapshots: SnapshotMemory,
    private readonly prepared: PreparedCache<Prepared>,
    private readonly rt: QuickJSRuntime,
    private readonly ctx: QuickJSContext,
    private readonly setup: SciEngineSetup,
    private readonly prepareFn: QuickJSHandle,
    private readonly runFn: QuickJSHandle,
    private readonly base: MemorySnapshot,
  ) {
    this.now = setup.now ?? Date.now;
  }

  /**
   * Boots SCI in a new runtime of `module` (whose memory is `memory`, owned by the engine
   * from now on) and takes the base snapshot. Throws when SCI cannot load: that is the
   * sandbox failing, not a checker.
   */
  static boot(
    module: QuickJSWASMModule,
    memory: WebAssembly.Memory,
    scittleSource: string,
    setup: SciEngineSetup,
  ): SciEngine {
    const now = setup.now ?? Date.now;
    // One handler for the engine's life: it reads the deadline of the call in progress.
    const booted: { engine?: SciEngine } = {};
    const bootDeadline = now() + BOOT_TIMEOUT_MS;
    const { rt, ctx, snapshots, prepared } = openSnapshotRuntime<Prepared>(
      module,
      memory,
      setup,
      () => {
        const engine = booted.engine;
        if (!engine) return now() >= bootDeadline;
        if (now() < engine.deadline) return false;
        engine.interrupted = true;
        return true;
      },
      { count: Infinity, bytes: setup.preparedBytes ?? DEFAULT_PREPARED_BYTES },
    );
    const run = (code: string, file: string) => {
      const r = ctx.evalCode(code, file, { type: "global" });
      if (r.error) {
        const why = ctx.dump(r.error);
        r.error.dispose();
        throw new Error(`The Clojure sandbox could not load ${file}: ${JSON.stringify(why)}`);
      }
      return r.value;
    };
    const clj = (code: string, what: string) => {
      const r = ctx.evalCode(
        `scittle.core.eval_string(${JSON.stringify(code)}), undefined`,
        what,
        { type: "global" },
      );
      if (r.error) {
        const why = ctx.dump(r.error);
        r.error.dispose();
        throw new Error(`The Clojure sandbox could not load ${what}: ${JSON.stringify(why)}`);
      }
      r.value.dispose();
    };
    const handles = [ctx.undefined, ctx.null, ctx.true, ctx.false, ctx.global].map((h) => h.value);
    const restored = setup.image !== undefined &&
      restoreImage(ctx, snapshots, memory, setup.image, handles);
    if (restored) {
      // The image holds the limits of the worker that made it: this worker's apply.
      rt.setMemoryLimit(setup.memoryLimitBytes);
      rt.setMaxStackSize(setup.stackBytes);
    }
    let image: Uint8Array | null = null;
    if (!restored) {
      run(BEFORE_SCI_JS, "before-sci.js").dispose();
      run(scittleSource, "scittle.js").dispose();
      // scittle's browser build offers `import` for script tags; a checker gets no loader.
      run("delete globalThis.import; undefined", "boot.js").dispose();
      run(COMPAT_JS, "compat.js").dispose();
      // The checker.js sandbox's guard: native array loops over a forged `length` stay
      // interruptible (SCI's own setup above ran without it).
      run(LOOP_GUARD_SOURCE, "loop_guard.js").dispose();
      clj(COMPAT_CLJ, "compat.clj");
      run(FAST_EDN_JS, "fast_edn.js").dispose();
      clj(FAST_EDN_CLJ, "fast_edn.clj");
      run(FAST_CORE_JS, "fast_core.js").dispose();
      clj(FAST_CORE_CLJ, "fast_core.clj");
      clj(GLUE_CLJ, "glue.clj");
      // Kept on a global until the handles below are taken: a restored image has it there.
      run(`globalThis.${GLUE_GLOBAL} = ${GLUE_JS}; undefined`, "glue.js").dispose();
      run("globalThis.__dvergrLogs.length = 0; undefined", "boot.js").dispose();
      if (setup.keepImage) image = imageOf(snapshots, memory, handles);
    }
    const glue = run(
      `(() => { const g = globalThis.${GLUE_GLOBAL}; delete globalThis.${GLUE_GLOBAL}; return g; })()`,
      "boot.js",
    );
    const prepareFn = ctx.getProp(glue, "prepare");
    const runFn = ctx.getProp(glue, "run");
    glue.dispose();
    const engine = new SciEngine(
      snapshots,
      prepared,
      rt,
      ctx,
      // Not the image: the engine keeps no copy of it.
      { ...setup, image: undefined },
      prepareFn,
      runFn,
      snapshots.take(),
    );
    engine.current = engine.base;
    engine.restored = restored;
    engine.image = image;
    booted.engine = engine;
    return engine;
  }

  /** Whether the engine started from a boot image rather than booting SCI. */
  restored = false;
  /**
   * The boot image of an engine that booted SCI with `keepImage` (sandbox/sci_image.ts),
   * for the host to keep; null otherwise.
   */
  image: Uint8Array | null = null;

  /** Bytes of the base snapshot and of every prepared checker's, for stats and tests. */
  sizes(): { base: number; prepared: number[] } {
    return {
      base: this.base.bytes,
      prepared: [...this.prepared.values()].map((p) => p.snapshot.bytes),
    };
  }

  /**
   * The checker image of a prepared checker (sandbox/sci_image.ts): its change to the base,
   * for the host to keep; null when it is not prepared here.
   */
  checkerImage(key: string): Uint8Array | null {
    const p = this.prepared.get(key);
    const s = p?.snapshot;
    if (!p || !s || !s.pages || s.base !== this.base) return null;
    return encodeCheckerImage({
      meta: {
        format: 1,
        key,
        ns: p.ns,
        check: p.check,
        judge: p.judge,
        generate: p.generate,
        gapEnd: s.gapEnd,
        top: s.top,
        pages: [...s.pages],
      },
      low: s.low,
      high: s.high,
    });
  }

  /**
   * Takes a checker image made by an engine with the same base (one restored from the same
   * boot image: the host pairs them) as the prepared checker `key`, so its first call loads
   * nothing. Refused (false) when this engine did not start from a boot image, or the image
   * is not one for `key` that fits this memory.
   */
  install(key: string, bytes: Uint8Array): boolean {
    if (!this.restored || this.poisoned || this.prepared.has(key)) return false;
    const { gapStart, gapEnd } = this.snapshots.layout;
    const image = decodeCheckerImage(bytes, key, gapStart);
    if (!image) return false;
    const { meta, low, high } = image;
    const shared = Math.min(meta.top, this.base.top) - gapEnd;
    const tail = meta.top - (gapEnd + (shared & ~3));
    let last = -1;
    const fits = meta.gapEnd === gapEnd && shared >= 0 && tail >= 0 &&
      meta.top <= this.snapshots.memory.buffer.byteLength &&
      high.byteLength === meta.pages.length * SNAPSHOT_PAGE + tail &&
      meta.pages.every((at) => {
        const ok = at > last && at % SNAPSHOT_PAGE === 0 && at < shared;
        last = at;
        return ok;
      });
    if (!fits) return false;
    this.prepared.set(key, {
      snapshot: {
        low,
        high,
        gapEnd,
        top: meta.top,
        bytes: low.byteLength + high.byteLength,
        base: this.base,
        pages: Uint32Array.from(meta.pages),
      },
      ns: meta.ns,
      check: meta.check,
      judge: meta.judge,
      generate: meta.generate ?? "none",
    });
    return true;
  }

  /** Whether a checker with this key is prepared in this engine. */
  has(key: string): boolean {
    return this.prepared.has(key);
  }

  /**
   * Puts the memory back in the state of the checker called last, so that its next call
   * finds it there and restores nothing: a worker that settles after sending a call's answer
   * restores while the host reads it, not when the next call has arrived. Nothing of the call
   * stays in memory either. Does nothing when poisoned, or when the memory is in that state.
   */
  settle(): void {
    if (this.poisoned || this.lastKey === null) return;
    const p = this.prepared.get(this.lastKey);
    if (!p || this.current === p.snapshot) return;
    this.snapshots.restore(p.snapshot);
    this.current = p.snapshot;
  }

  /** Runs one call; see the module comment. Never throws. */
  call(req: ClojureCallRequest): ClojureCallReport {
    const logs: string[] = [];
    let loaded = false;
    if (this.poisoned) {
      return {
        outcome: {
          ok: false,
          fault: "crashed",
          message: "The Clojure sandbox can no longer run checkers",
        },
        logs,
        poisoned: true,
        loaded,
      };
    }
    this.interrupted = false;
    this.file = req.fn === "generate" ? "generator.clj" : "checker.clj";
    this.timeoutMs = req.timeoutMs;
    this.deadline = this.now() + req.timeoutMs;
    let outcome: ClojureOutcome;
    try {
      const remembered = this.remembered.get(req.key);
      if (remembered) return { outcome: remembered, logs, poisoned: false, loaded };
      refuseOversized(req, this.setup);
      let p = this.prepared.get(req.key);
      if (p) {
        this.restore(p.snapshot);
      } else {
        loaded = true;
        p = this.prepare(req, logs);
      }
      this.lastKey = req.key;
      outcome = this.runPrepared(p, req, logs);
    } catch (e) {
      if (e instanceof Fault) {
        outcome = { ok: false, fault: e.fault, message: e.message };
      } else {
        // The bindings or the wasm instance failed, not checker code: most often the
        // host's stack overflowing inside QuickJS's native recursion.
        this.poisoned = true;
        const stack = e instanceof RangeError && /call stack/i.test(e.message);
        outcome = stack
          ? {
            ok: false,
            fault: "memory",
            message: `${this.file} overflowed the sandbox's stack (too deep a recursion?)`,
          }
          : {
            ok: false,
            fault: "crashed",
            message: `The sandbox crashed while running ${this.file}: ${errorText(e)}`,
          };
      }
    }
    this.deadline = Infinity;
    return { outcome, logs, poisoned: this.poisoned, loaded };
  }

  private restore(s: MemorySnapshot): void {
    if (this.current !== s) this.snapshots.restore(s);
    this.current = null;
  }

  private prepare(req: ClojureCallRequest, logs: string[]): Prepared {
    this.restore(this.base);
    const a = this.glue(this.prepareFn, [req.source], "load", logs);
    if (a.error) {
      const f = this.loadFault(a.error);
      if (f.fault === "syntax" && !this.interrupted) this.remember(req.key, f);
      throw f;
    }
    // Only what loading the checker changed: SCI itself is in the base, ~10 MiB.
    const snapshot = this.snapshots.take(this.base);
    const p: Prepared = {
      snapshot,
      ns: a.ns ?? "user",
      check: a.check ?? "none",
      judge: a.judge ?? "none",
      generate: a.generate ?? "none",
    };
    this.prepared.set(req.key, p);
    this.current = snapshot;
    return p;
  }

  private remember(key: string, f: Fault): void {
    if (this.remembered.size >= MAX_REMEMBERED_FAULTS) {
      this.remembered.delete(this.remembered.keys().next().value!);
    }
    this.remembered.set(key, { ok: false, fault: f.fault, message: f.message });
  }

  private runPrepared(p: Prepared, req: ClojureCallRequest, logs: string[]): ClojureOutcome {
    const kind = req.fn === "check" ? p.check : req.fn === "generate" ? p.generate : p.judge;
    const name = fnName(req.fn);
    if (kind === "none") {
      if (req.fn === "judgeRequests") return { ok: true, edn: "[]" };
      throw new Fault(
        "no-check",
        `${this.file} defines no \`${name}\` (looked in namespace ${p.ns}, the namespace ` +
          `current after loading it: define \`(defn ${name} [input] …)\` there)`,
      );
    }
    if (kind === "value") {
      throw new Fault(
        "no-check",
        `${this.file} defines \`${name}\` in namespace ${p.ns} but it is not a function`,
      );
    }
    this.current = null;
    const a = this.glue(this.runFn, [req.fn, req.input], "call", logs);
    if (a.error) throw this.callFault(a.error, a.phase ?? "call", req.fn);
    const edn = a.edn ?? "";
    if (edn.length > MAX_RESULT_CHARS) {
      throw new Fault(
        "invalid-verdict",
        `${
          noResult(req.fn)
        }: it is too large (${edn.length} characters as EDN; the limit is ${MAX_RESULT_CHARS})`,
      );
    }
    // Native code that never polls the interrupt handler can still overrun the deadline.
    if (this.now() > this.deadline) throw this.timeout();
    return { ok: true, edn };
  }

  /** Calls a glue function with string arguments; its JSON answer, or a Fault. */
  private glue(
    fn: QuickJSHandle,
    args: string[],
    phase: "load" | "call",
    logs: string[],
  ): GlueAnswer {
    const { ctx } = this;
    const handles = args.map((a) => ctx.newString(a));
    try {
      const r = ctx.callFunction(fn, ctx.undefined, ...handles);
      if (r.error) {
        const fault = this.escapedFault(r.error, phase);
        r.error.dispose();
        throw fault;
      }
      // The glue answers a string; a checker can make it huge, so its length is read first.
      const isText = ctx.typeof(r.value) === "string";
      let length = 0;
      if (isText) {
        const h = ctx.getProp(r.value, "length");
        length = ctx.getNumber(h);
        h.dispose();
      }
      if (length > 2 * MAX_RESULT_CHARS) {
        r.value.dispose();
        throw new Fault(
          "invalid-verdict",
          `${this.file}'s result is too large (${length} characters; the limit is ${MAX_RESULT_CHARS})`,
        );
      }
      const text = isText ? ctx.getString(r.value) : "";
      r.value.dispose();
      let answer: GlueAnswer;
      try {
        answer = JSON.parse(text) as GlueAnswer;
      } catch {
        throw new Fault(
          "invalid-verdict",
          `${this.file}'s result could not be read: it changed what the sandbox relies on`,
        );
      }
      for (const line of answer.logs ?? []) {
        if (logs.length < MAX_LOG_LINES) logs.push(String(line).slice(0, MAX_LOG_LINE_CHARS));
      }
      return answer;
    } finally {
      for (const h of handles) h.dispose();
    }
  }

  /** A value that escaped the glue's own try/catch: a timeout, or memory running out. */
  private escapedFault(error: QuickJSHandle, phase: "load" | "call"): Fault {
    if (this.interrupted) return this.timeout();
    const { ctx } = this;
    let name = "";
    let message = "";
    try {
      if (ctx.typeof(error) === "object") {
        const n = ctx.getProp(error, "name");
        const m = ctx.getProp(error, "message");
        name = ctx.typeof(n) === "string" ? ctx.getString(n) : "";
        message = ctx.typeof(m) === "string" ? ctx.getString(m) : "";
        n.dispose();
        m.dispose();
      }
    } catch {
      // Reading the error needs memory too; what it was is said below.
    }
    if (this.interrupted) return this.timeout();
    const memory = this.memoryFault([{ isError: true, name, message }]);
    if (memory) return memory;
    if (ctx.typeof(error) === "object" && name === "" && message === "") {
      return this.memoryFault([{
        isError: true,
        name: "InternalError",
        message: "out of memory",
      }])!;
    }
    return new Fault(
      "threw",
      `${this.file} ${phase === "load" ? "threw while loading" : "threw"}: ${name || "Error"}: ${
        clip(message)
      }`,
    );
  }

  private timeout(): Fault {
    return new Fault(
      "timeout",
      this.file === "generator.clj"
        ? `generator.clj did not finish within ${this.timeoutMs}ms`
        : `The checker did not finish within ${this.timeoutMs}ms (checker.clj)`,
    );
  }

  /** The memory fault a chain of errors means, if it means one. */
  private memoryFault(chain: Described[]): Fault | null {
    for (const d of chain) {
      if (d.name !== "InternalError") continue;
      if (d.message === "out of memory" || d.message === "string too long") {
        return new Fault(
          "memory",
          `${this.file} ran out of memory (the sandbox allows ${mib(this.setup.memoryCapBytes)})`,
        );
      }
      if (d.message === "stack overflow") {
        return new Fault(
          "memory",
          `${this.file} overflowed its stack (the sandbox allows ${
            this.setup.stackBytes / 1024
          } KiB; too deep a recursion?)`,
        );
      }
    }
    return null;
  }

  private loadFault(chain: Described[]): Fault {
    if (this.interrupted) return this.timeout();
    const memory = this.memoryFault(chain);
    if (memory) return memory;
    const top = chain[0] ?? { isError: false };
    const at = located(chain, this.file);
    const message = clip(top.message ?? top.text ?? "an unknown error");
    if (chain.some((d) => d.phase === "parse")) {
      return new Fault("syntax", `${this.file} has a syntax error: ${message}${at}`);
    }
    if (chain.some((d) => d.phase === "analysis")) {
      return new Fault("syntax", `${this.file} does not compile: ${message}${at}`);
    }
    return new Fault(
      "threw",
      `${this.file} threw while loading: ${message}${dataOf(chain)}${at}`,
    );
  }

  private callFault(chain: Described[], phase: string, fn: ClojureFunction): Fault {
    if (this.interrupted) return this.timeout();
    const memory = this.memoryFault(chain);
    if (memory) return memory;
    const top = chain[0] ?? { isError: false };
    const message = clip(top.message ?? top.text ?? "an unknown error");
    if (phase === "input") {
      return new Fault(
        "crashed",
        `The sandbox could not prepare ${
          fn === "generate" ? "generator.clj's" : "the checker's"
        } input: ${message}`,
      );
    }
    if (phase === "result") {
      return new Fault("invalid-verdict", `${noResult(fn)}: it cannot be printed: ${message}`);
    }
    return new Fault(
      "threw",
      `${this.file}'s ${fnName(fn)} threw: ${message}${dataOf(chain)}${located(chain, this.file)}`,
    );
  }
}

function noResult(fn: ClojureFunction): string {
  return fn === "check"
    ? "The checker returned no verdict"
    : fn === "generate"
    ? "generator.clj's generate returned no world"
    : "judge-requests returned no requests";
}

/** The Clojure name of a call's function. */
function fnName(fn: ClojureFunction): string {
  return fn === "judgeRequests" ? "judge-requests" : fn;
}

/** " (checker.clj line 3, column 7)" from the innermost located error, or "". */
function located(chain: Described[], file: string): string {
  const d = [...chain].reverse().find((x) => typeof x.line === "number");
  if (!d) return "";
  return typeof d.column === "number"
    ? ` (${file} line ${d.line}, column ${d.column})`
    : ` (${file} line ${d.line})`;
}

/** " {:field 1}": the ex-data a checker attached to what it threw, when it did. */
function dataOf(chain: Described[]): string {
  const d = chain.find((x) => x.data !== undefined);
  return d ? ` ${d.data}` : "";
}

/** Where the glue waits between SCI's boot and the engine taking its handles. */
const GLUE_GLOBAL = "__dvergrGlue";
