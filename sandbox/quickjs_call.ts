/**
 * Checker calls in one QuickJS runtime and context whose state is put back before every
 * call: the context is prepared once (prelude with `edn`, loop guard), each checker.js is
 * loaded once and the wasm memory snapshotted (see sandbox/wasm_snapshot.ts), and each call
 * restores the snapshot of its checker, so it starts from exactly the state right after
 * checker.js loaded. Nothing a call does survives it: globals, prototypes, module state,
 * the fixed-seed Math.random and the allocator are all in the restored memory.
 *
 * The prepared context can also come from a boot image another worker made of its memory
 * right after the prelude and the loop guard (sandbox/quickjs_image.ts): restored instead of
 * running them, which with the lazy compilation of the QuickJS functions they need is most
 * of a worker's boot. Both ways make the two host functions first, in the same order, so
 * the ids the image's functions hold name the same functions here. A sandbox restored so
 * also makes and takes checker images (a checker's memory right after its load), so that a
 * checker loaded in an earlier worker is neither parsed nor run again.
 *
 * Runs inside the checker worker (no permissions); takes a loaded QuickJS module and the
 * WebAssembly.Memory it runs in.
 */
import type {
  QuickJSContext,
  QuickJSHandle,
  QuickJSRuntime,
  QuickJSWASMModule,
} from "quickjs-emscripten-core";
import type { CallOutcome, CallReport, CallRequest } from "./protocol.ts";
import { PRELUDE_SOURCE } from "./prelude.ts";
import { LOOP_GUARD_SOURCE } from "./loop_guard.ts";
import { ednBridge } from "./edn_bridge.ts";
import type { MemoryLayout, MemorySnapshot, SnapshotMemory } from "./wasm_snapshot.ts";
import { clip, errorText, Fault, mib } from "./fault_text.ts";
import {
  imageOf,
  openSnapshotRuntime,
  refuseOversized,
  restoreImage,
  type RuntimeLimits,
} from "./quickjs_runtime.ts";
import type { PreparedCache } from "./quickjs_runtime.ts";
import type { KnownLayout } from "./known_layout.ts";
import { decodeCheckerImage, encodeCheckerImage } from "./quickjs_image.ts";

export interface CallSetup extends RuntimeLimits {
  /** The wasm memory's current size (it only grows). */
  wasmBytes: () => number;
  /** The module's layout, known to fit it (sandbox/known_layout.ts layoutFits). */
  layout?: KnownLayout;
  /**
   * A boot image (sandbox/quickjs_image.ts) to restore instead of running the prelude; one
   * that does not fit this module (another layout, other handles) is ignored.
   */
  image?: Uint8Array;
  /** When the prelude runs (no image, or one refused): keep the boot image in `image`. */
  keepImage?: boolean;
}

/** Lines and characters of console output kept per call. */
export const MAX_LOG_LINES = 100;
export const MAX_LOG_LINE_CHARS = 2_000;
/** Largest result accepted from checker.js, as JSON text. */
export const MAX_RESULT_CHARS = 4 * 1024 * 1024;
/** Time given to reading a thrown value (its getters are checker code). */
const DESCRIBE_MS = 250;
const JOB_BATCH = 256;
/** Prepared checkers kept per sandbox, and the bytes their snapshots may hold together. */
export const MAX_PREPARED = 32;
export const MAX_PREPARED_BYTES = 64 * 1024 * 1024;

type Phase = "setup" | "module" | "call" | "result";

/** The prelude's functions, captured before any checker code ran. */
interface Helpers {
  parse: QuickJSHandle;
  serialize: QuickJSHandle;
  describe: QuickJSHandle;
  reseed: QuickJSHandle;
}

interface Described {
  kind: string;
  isError: boolean;
  name?: string;
  message?: string;
  stack?: string;
  text?: string;
}

/** What one call has to itself: its clock, its console lines, the imports it tried. */
interface CallState {
  deadline: number;
  interrupted: boolean;
  logs: string[];
  refusedImports: string[];
  /** The checker was loaded (not found prepared) in this call. */
  loaded: boolean;
  /** The file the call's source is: "checker.js", or "generator.js" for `generate`. */
  file: string;
}

/** A checker loaded into the context, with the memory state right after it loaded. */
interface Prepared {
  snapshot: MemorySnapshot;
  /** The module namespace, valid whenever this snapshot is the restored state. */
  exports: QuickJSHandle;
  /** What checker.js wrote with console.* while loading; every call's logs start with it. */
  loadLogs: string[];
}

/**
 * One QuickJS runtime and context, prepared once, that runs any number of checker calls,
 * each from a restored snapshot. Never throws for anything a checker does; a misbehaving
 * wasm instance is reported as `poisoned` (replace the worker) with a "crashed" fault.
 */
export class QuickJSSandbox {
  private readonly rt: QuickJSRuntime;
  private readonly ctx: QuickJSContext;
  private readonly snapshots: SnapshotMemory;
  private readonly helpers: Helpers;
  private readonly base: MemorySnapshot;
  private readonly prepared: PreparedCache<Prepared>;
  private state: CallState = newState(Number.MAX_SAFE_INTEGER);
  /** Handles held for the sandbox's life: they keep their values alive in every snapshot. */
  private readonly kept: QuickJSHandle[] = [];
  /** The memory layout as this sandbox found it (none when it was given), to hand on. */
  readonly foundLayout?: { layout: MemoryLayout; breakValue: number };
  /** Whether it started from the setup's boot image rather than running the prelude. */
  readonly restored: boolean;
  /**
   * Its boot image (sandbox/sci_image.ts's format: the memory once the prelude and the loop
   * guard ran, before any checker), when the setup asked to keep one and it booted; the
   * worker sends it to the host once and drops it.
   */
  image: Uint8Array | null = null;

  /**
   * Prepares the context in `module` (freshly instantiated in `memory`: the memory layout is
   * read from it). Throws when the prelude cannot be set up, which is a bug of ours.
   */
  constructor(
    module: QuickJSWASMModule,
    memory: WebAssembly.Memory,
    private readonly setup: CallSetup,
  ) {
    ({
      rt: this.rt,
      ctx: this.ctx,
      snapshots: this.snapshots,
      prepared: this.prepared,
      found: this.foundLayout,
    } = openSnapshotRuntime<Prepared>(
      module,
      memory,
      setup,
      () => {
        if (Date.now() < this.state.deadline) return false;
        this.state.interrupted = true;
        return true;
      },
      { count: MAX_PREPARED, bytes: MAX_PREPARED_BYTES },
      setup.layout,
    ));
    this.rt.setModuleLoader((name) => {
      this.state.refusedImports.push(name);
      return {
        error: new Error(
          `${this.state.file} cannot import "${name}": the sandbox loads no modules`,
        ),
      };
    });
    // Made in the same order on either path, so their ids in the host's table are the ones a
    // boot image's functions hold.
    const { logFn, ednFn } = this.hostFunctions();
    const { ctx } = this;
    const handles = [ctx.undefined, ctx.null, ctx.true, ctx.false, ctx.global, logFn, ednFn]
      .map((h) => h.value);
    this.restored = setup.image !== undefined &&
      restoreImage(ctx, this.snapshots, memory, setup.image, handles);
    if (this.restored) {
      // The image holds the limits of the worker that made it: this worker's apply.
      this.rt.setMemoryLimit(setup.memoryLimitBytes);
      this.rt.setMaxStackSize(setup.stackBytes);
    } else {
      this.installPrelude(logFn, ednFn);
      if (setup.keepImage) this.image = imageOf(this.snapshots, memory, handles);
    }
    this.helpers = this.takeHelpers();
    this.base = this.snapshots.take();
  }

  /**
   * The checker image of prepared checker `key` (sandbox/quickjs_image.ts): the memory right
   * after it loaded, with the addresses a worker restored from the same boot image needs to
   * call it; null when this sandbox did not start from a boot image (the host pairs checker
   * images with the boot image they were made on) or has no such checker.
   */
  checkerImage(key: string): Uint8Array | null {
    const hit = this.restored ? this.prepared.get(key) : undefined;
    if (!hit || hit.snapshot.base) return null;
    const { gapEnd, top, low, high } = hit.snapshot;
    return encodeCheckerImage(
      {
        format: 1,
        engine: "checker.js",
        key,
        gapEnd,
        top,
        exports: hit.exports.value,
        helpers: this.helperAddresses(),
        logs: hit.loadLogs,
        limits: [this.setup.memoryLimitBytes, this.setup.stackBytes],
      },
      low,
      high,
    );
  }

  /**
   * Takes a checker image as the prepared checker `key`, so that its first call here loads
   * nothing (no parse, no run of its top level). Refused (false) unless this sandbox started
   * from a boot image, the image is one of `key` for this memory layout, the prelude's
   * helpers lie where they lay in the worker that made it, it was made with the same heap and
   * stack limits (they are in its memory) and it fits the memory as it is.
   */
  install(key: string, bytes: Uint8Array): boolean {
    if (!this.restored || this.prepared.has(key)) return false;
    const { gapStart, gapEnd } = this.snapshots.layout;
    const image = decodeCheckerImage(bytes, key, gapStart);
    const handleAt = (this.ctx as unknown as {
      memory?: { heapValueHandle?: (ptr: number) => QuickJSHandle };
    }).memory?.heapValueHandle;
    if (!image || typeof handleAt !== "function") return false;
    const { meta, low, high } = image;
    const here = this.helperAddresses();
    const fits = meta.gapEnd === gapEnd && meta.top <= this.snapshots.memory.buffer.byteLength &&
      meta.helpers.length === here.length && meta.helpers.every((h, i) => h === here[i]) &&
      meta.logs.length <= MAX_LOG_LINES && meta.limits[0] === this.setup.memoryLimitBytes &&
      meta.limits[1] === this.setup.stackBytes;
    if (!fits) return false;
    const exports = handleAt.call(
      (this.ctx as unknown as { memory: unknown }).memory,
      meta.exports,
    );
    this.prepared.set(key, {
      snapshot: { low, high, gapEnd, top: meta.top, bytes: low.byteLength + high.byteLength },
      exports,
      loadLogs: meta.logs.map((l) => l.slice(0, MAX_LOG_LINE_CHARS)),
    });
    return true;
  }

  /** Where the prelude's helper handles lie on the heap. */
  private helperAddresses(): number[] {
    const { parse, serialize, describe, reseed } = this.helpers;
    return [parse, serialize, describe, reseed].map((h) => h.value);
  }

  /** Sizes, for tests and benchmarks. */
  info(): { baseBytes: number; prepared: number; preparedBytes: number; layout: MemoryLayout } {
    return {
      baseBytes: this.base.bytes,
      prepared: this.prepared.size,
      preparedBytes: this.prepared.bytes,
      layout: this.snapshots.layout,
    };
  }

  /**
   * Runs `req.fn` of checker `req.source` on `req.input` from the state right after the
   * checker loaded, and reports a JSON result or a fault.
   */
  call(req: CallRequest): CallReport {
    this.state = newState(Date.now() + req.timeoutMs, sourceFile(req.fn));
    let outcome: CallOutcome;
    try {
      outcome = new CheckerCall(this, req).run();
    } catch (e) {
      // Anything reaching here is the wasm instance or the bindings failing, not checker
      // code: most often the host stack overflowing inside QuickJS's native recursion
      // (deeply nested source or data) before QuickJS's own stack check fires. Its wasm
      // stack pointer is now unknown: the worker is replaced.
      const stack = e instanceof RangeError && /call stack/i.test(e.message);
      return {
        outcome: {
          ok: false,
          fault: "crashed",
          message: `The sandbox crashed while running ${
            req.fn === "generate" ? "generator.js" : "the checker"
          }: ${errorText(e)}${stack ? " (too deeply nested code or data?)" : ""}`,
        },
        logs: this.state.logs,
        poisoned: true,
        loaded: this.state.loaded,
      };
    }
    return { outcome, logs: this.state.logs, poisoned: false, loaded: this.state.loaded };
  }

  /** @internal the parts a CheckerCall works with. */
  get parts() {
    return {
      ctx: this.ctx,
      rt: this.rt,
      setup: this.setup,
      helpers: this.helpers,
      state: this.state,
    };
  }

  /**
   * Puts the context in the state right after `source` loaded: restores its snapshot, or
   * loads it from the base state and snapshots it. A load that faults is not kept.
   */
  load(
    key: string,
    source: string,
    settle: (h: QuickJSHandle) => QuickJSHandle,
    fail: (e: QuickJSHandle) => never,
  ): QuickJSHandle {
    const hit = this.prepared.get(key);
    if (hit) {
      this.snapshots.restore(hit.snapshot);
      this.state.logs.push(...hit.loadLogs);
      return hit.exports;
    }
    this.state.loaded = true;
    this.snapshots.restore(this.base);
    const evaluated = this.ctx.evalCode(source, this.state.file, { type: "module" });
    if (evaluated.error) fail(evaluated.error);
    const exports = settle(evaluated.value);
    const snapshot = this.snapshots.take();
    this.prepared.set(key, { snapshot, exports, loadLogs: [...this.state.logs] });
    return exports;
  }

  private keep(h: QuickJSHandle): QuickJSHandle {
    this.kept.push(h);
    return h;
  }

  /** The host functions the prelude is given: console lines and the EDN bridge. */
  private hostFunctions(): { logFn: QuickJSHandle; ednFn: QuickJSHandle } {
    const { ctx } = this;
    const logFn = this.keep(ctx.newFunction("hostLog", (line) => {
      const logs = this.state.logs;
      if (logs.length < MAX_LOG_LINES && ctx.typeof(line) === "string") {
        logs.push(ctx.getString(line).slice(0, MAX_LOG_LINE_CHARS));
      }
    }));
    const ednFn = this.keep(ctx.newFunction("hostEdn", (op, text, arg) => {
      const state = this.state;
      if (Date.now() >= state.deadline) {
        // Past the deadline the call is over whatever the checker does with the error:
        // QuickJS may not poll the interrupt handler for another 10,000 iterations, so
        // each of them must be quick (not even the text is copied out).
        state.interrupted = true;
        const name = ctx.typeof(op) === "string" ? ctx.getString(op).slice(0, 20) : "";
        return ctx.newString(ednBridge(name, "", "", state.deadline));
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
        state.deadline,
      );
      if (Date.now() >= state.deadline) state.interrupted = true;
      return ctx.newString(answer);
    }));
    return { logFn, ednFn };
  }

  /**
   * Runs the prelude (its helpers left on HELPERS_GLOBAL for takeHelpers()) and the loop
   * guard. Throws when they cannot be set up, which is a bug of ours.
   */
  private installPrelude(logFn: QuickJSHandle, ednFn: QuickJSHandle): void {
    const { ctx } = this;
    const unwrap = (r: ReturnType<QuickJSContext["evalCode"]>, what: string): QuickJSHandle => {
      if (r.error) {
        const text = ctx.dump(r.error);
        throw new Error(`The sandbox could not set up ${what}: ${JSON.stringify(text)}`);
      }
      return this.keep(r.value);
    };
    const factory = unwrap(
      ctx.evalCode(PRELUDE_SOURCE, "prelude.js", { type: "global" }),
      "its prelude",
    );
    const obj = unwrap(ctx.callFunction(factory, ctx.undefined, logFn, ednFn), "its prelude");
    unwrap(ctx.evalCode(LOOP_GUARD_SOURCE, "loop_guard.js", { type: "global" }), "its loop guard");
    // Kept on a global until takeHelpers(): a boot image has them there.
    ctx.setProp(ctx.global, HELPERS_GLOBAL, obj);
  }

  /**
   * The prelude's helpers, taken off their global before any checker runs: read and deleted
   * through property calls, not evaluated code, so that a worker restored from a boot image
   * with its checker's image too never needs QuickJS's parser (its first use is ~10 ms of
   * lazy compilation).
   */
  private takeHelpers(): Helpers {
    const { ctx } = this;
    const obj = this.keep(ctx.getProp(ctx.global, HELPERS_GLOBAL));
    if (ctx.typeof(obj) !== "object") {
      throw new Error("The sandbox could not set up its prelude: its helpers are missing");
    }
    const reflect = ctx.getProp(ctx.global, "Reflect");
    const remove = ctx.getProp(reflect, "deleteProperty");
    const name = ctx.newString(HELPERS_GLOBAL);
    const removed = ctx.callFunction(remove, ctx.undefined, ctx.global, name);
    const gone = !removed.error && ctx.dump(removed.value) === true;
    (removed.error ?? removed.value).dispose();
    for (const h of [name, remove, reflect]) h.dispose();
    if (!gone) throw new Error("The sandbox could not set up its prelude: its helpers stay");
    return {
      parse: this.keep(ctx.getProp(obj, "parse")),
      serialize: this.keep(ctx.getProp(obj, "serialize")),
      describe: this.keep(ctx.getProp(obj, "describe")),
      reseed: this.keep(ctx.getProp(obj, "reseed")),
    };
  }
}

/** Where the prelude's helpers wait between the prelude (or a boot image) and takeHelpers(). */
const HELPERS_GLOBAL = "__dvergrHelpers";

function newState(deadline: number, file = "checker.js"): CallState {
  return { deadline, interrupted: false, logs: [], refusedImports: [], loaded: false, file };
}

/** The file whose source a call runs: generator.js for `generate`, else checker.js. */
export function sourceFile(fn: CallRequest["fn"]): string {
  return fn === "generate" ? "generator.js" : "checker.js";
}

/**
 * One call: its steps, and how what the checker threw becomes a fault. Handles it makes are
 * never disposed: the next restore makes their memory the restored state's again.
 */
class CheckerCall {
  private readonly ctx: QuickJSContext;
  private readonly rt: QuickJSRuntime;
  private readonly setup: CallSetup;
  private readonly helpers: Helpers;
  private readonly state: CallState;
  private readonly who: string;
  /** "checker.js" or "generator.js". */
  private readonly file: string;

  constructor(private readonly sandbox: QuickJSSandbox, private readonly req: CallRequest) {
    ({ ctx: this.ctx, rt: this.rt, setup: this.setup, helpers: this.helpers, state: this.state } =
      sandbox.parts);
    this.file = sourceFile(req.fn);
    this.who = req.fn === "check"
      ? "The checker"
      : req.fn === "generate"
      ? "generator.js's generate"
      : "The checker's judgeRequests";
  }

  run(): CallOutcome {
    try {
      return { ok: true, json: this.runSteps() };
    } catch (e) {
      if (e instanceof Fault) return { ok: false, fault: e.fault, message: e.message };
      throw e;
    }
  }

  private runSteps(): string {
    const { ctx, helpers } = this;
    refuseOversized(this.req, this.setup);
    const exports = this.sandbox.load(
      this.req.key,
      this.req.source,
      (h) => this.settle(h, "module"),
      (e) => this.failWith(e, "module"),
    );

    const inputText = ctx.newString(this.req.input);
    const parsed = ctx.callFunction(helpers.parse, ctx.undefined, inputText);
    if (parsed.error) this.failWith(parsed.error, "setup");
    const input = parsed.value;
    if (this.req.fn === "generate") {
      // Each world draws its own Math.random numbers, the same ones every time.
      const reseeded = ctx.callFunction(helpers.reseed, ctx.undefined, ctx.getProp(input, "seed"));
      if (reseeded.error) this.failWith(reseeded.error, "setup");
    }

    const fn = ctx.getProp(exports, this.req.fn);
    const fnType = ctx.typeof(fn);
    if (fnType !== "function") {
      if (this.req.fn === "judgeRequests" && fnType === "undefined") return "[]";
      const onlyDefault = fnType === "undefined" &&
        ctx.typeof(ctx.getProp(exports, "default")) === "function";
      throw new Fault(
        "no-check",
        fnType === "undefined"
          ? `${this.file} exports no \`${this.req.fn}\` function${
            onlyDefault
              ? ` (it has a default export; export the function by name: \`export function ${this.req.fn}(input)\`)`
              : ""
          }`
          : `${this.file} exports \`${this.req.fn}\` but it is ${article(fnType)}, not a function`,
      );
    }

    const called = ctx.callFunction(fn, ctx.undefined, input);
    if (called.error) this.failWith(called.error, "call");
    const result = this.settle(called.value, "call");

    const serialized = ctx.callFunction(helpers.serialize, ctx.undefined, result);
    if (serialized.error) this.failWith(serialized.error, "result");
    const text = serialized.value;
    if (ctx.typeof(text) !== "string") {
      // JSON.stringify gives undefined only for undefined, functions and symbols at the
      // top, and the replacer turns those into marks, so this is defensive.
      return JSON.stringify({ "\u0000dvergr": ctx.typeof(text) });
    }
    const length = ctx.getNumber(ctx.getProp(text, "length"));
    if (length > MAX_RESULT_CHARS) {
      throw new Fault(
        "invalid-verdict",
        `${this.noResult()}: it is too large (${length} characters as JSON; the limit is ${MAX_RESULT_CHARS})`,
      );
    }
    // A call can overrun its deadline inside native code that never polls the interrupt
    // handler (a long typed-array sort); finishing late is still not finishing in time.
    if (Date.now() > this.state.deadline) throw this.timeout();
    return ctx.getString(text);
  }

  /** Runs pending jobs until `h` (a promise or not) settles; returns the settled value. */
  private settle(h: QuickJSHandle, phase: Phase): QuickJSHandle {
    const { ctx, rt } = this;
    for (;;) {
      const state = ctx.getPromiseState(h);
      if (state.type === "fulfilled") return state.notAPromise ? h : state.value;
      if (state.type === "rejected") this.failWith(state.error, phase);
      if (Date.now() >= this.state.deadline) {
        this.state.interrupted = true;
        throw this.timeout(phase);
      }
      if (!rt.hasPendingJob()) {
        throw new Fault(
          "timeout",
          phase === "module"
            ? `${this.file} never finished loading: its top-level await waits for a promise ` +
              "that nothing can settle (the sandbox has no timers or I/O)"
            : `${this.who} returned a promise that never settles: nothing is left to run ` +
              "(the sandbox has no timers or I/O)",
        );
      }
      const ran = rt.executePendingJobs(JOB_BATCH);
      if (ran.error) this.failWith(ran.error, phase);
    }
  }

  /** The fault of a call out of time; loading names that (a top level that never ends). */
  private timeout(phase?: Phase): Fault {
    if (phase === "module") {
      return new Fault(
        "timeout",
        `${this.file} did not finish loading within ${this.req.timeoutMs}ms: its top level ` +
          "never ends",
      );
    }
    const who = this.req.fn === "generate" ? "generator.js" : "The checker";
    return new Fault("timeout", `${who} did not finish within ${this.req.timeoutMs}ms`);
  }

  private noResult(): string {
    return this.req.fn === "check"
      ? "The checker returned no verdict"
      : this.req.fn === "generate"
      ? "generator.js's generate returned no world"
      : "judgeRequests returned no requests";
  }

  /** Turns a thrown value into the fault it means; never returns. */
  private failWith(error: QuickJSHandle, phase: Phase): never {
    if (this.state.interrupted) throw this.timeout(phase);
    const d = this.describe(error);
    if (this.state.interrupted) throw this.timeout(phase);
    const name = d.name ?? "";
    const message = d.message ?? "";
    const where = checkerLine(d.stack, this.file);
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
      throw new Fault("syntax", `${this.file} has a syntax error: ${message}${where}`);
    }
    if (phase === "module" && this.state.refusedImports.length > 0) {
      throw new Fault(
        "syntax",
        `${this.file} cannot import ${
          this.state.refusedImports.map((n) => `"${n}"`).join(", ")
        }: ` +
          `${
            this.file === "checker.js" ? "a checker" : "a generator"
          } must be self-contained (the sandbox loads no modules; \`edn\` is a global)`,
      );
    }
    if (phase === "result") {
      throw new Fault(
        "invalid-verdict",
        `${this.noResult()}: it cannot be read as JSON: ${shown(d)}`,
      );
    }
    const during = phase === "module" ? `${this.file} threw while loading` : `${this.who} threw`;
    throw new Fault("threw", `${during} ${shown(d)}${where}`);
  }

  /** Reads a thrown value inside the sandbox, with a short budget of its own. */
  private describe(error: QuickJSHandle): Described {
    const { ctx, helpers, state } = this;
    const saved = state.deadline;
    state.deadline = Date.now() + DESCRIBE_MS;
    try {
      const r = ctx.callFunction(helpers.describe, ctx.undefined, error);
      if (r.error) {
        state.interrupted = false;
        return { kind: "unknown", isError: false };
      }
      const text = r.value;
      if (ctx.typeof(text) !== "string") return { kind: "unknown", isError: false };
      return JSON.parse(ctx.getString(text)) as Described;
    } finally {
      state.deadline = saved;
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

/** " (checker.js line 3, column 7)" from the first frame of `file` in a stack, or "". */
function checkerLine(stack: string | undefined, file: string): string {
  const m = new RegExp(`${file.replace(".", "\\.")}:(\\d+)(?::(\\d+))?`).exec(stack ?? "");
  if (!m) return "";
  return m[2] ? ` (${file} line ${m[1]}, column ${m[2]})` : ` (${file} line ${m[1]})`;
}

function article(type: string): string {
  return /^[aeiou]/.test(type) ? `an ${type}` : `a ${type}`;
}
