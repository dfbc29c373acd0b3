/**
 * The checker worker: a Deno Worker started with `deno: { permissions: "none" }` that
 * loads QuickJS once (the wasm is embedded in the module, so it needs no permission) and
 * then answers call messages one at a time, each in a fresh QuickJS runtime and context.
 *
 * Permissions: none. The pool terminates the worker when it is poisoned or hangs.
 */
/// <reference lib="deno.worker" />
import {
  type CustomizeVariantOptions,
  newQuickJSWASMModuleFromVariant,
  newVariant,
  type QuickJSWASMModule,
} from "quickjs-emscripten-core";
import variant from "@jitl/quickjs-singlefile-mjs-release-sync";
import type { CallMessage, HostMessage, InitMessage, WorkerMessage } from "./protocol.ts";
import { type CallSetup, runCheckerCall } from "./quickjs_call.ts";

const PAGE = 64 * 1024;
/** The module's own minimum (its static data and C stack live in the same memory). */
const INITIAL_PAGES = 256;
/** What the QuickJS heap may use below the wasm cap, leaving room for the C stack. */
const HEAP_RESERVE_BYTES = 8 * 1024 * 1024;

/** Emscripten reads `print`/`printErr` from its module options; its types omit them. */
const QUIET = { print: () => {}, printErr: () => {} } as unknown as NonNullable<
  CustomizeVariantOptions["emscriptenModule"]
>;

let module: QuickJSWASMModule | undefined;
let memory: WebAssembly.Memory | undefined;
let setup: CallSetup | undefined;
let busy = false;

function send(message: WorkerMessage): void {
  self.postMessage(message);
}

async function init(msg: InitMessage): Promise<void> {
  const maximum = Math.max(INITIAL_PAGES, Math.ceil(msg.memoryBytes / PAGE));
  memory = new WebAssembly.Memory({ initial: INITIAL_PAGES, maximum });
  module = await newQuickJSWASMModuleFromVariant(
    newVariant(variant, {
      wasmMemory: memory,
      // Emscripten prints aborts and warnings to the console; the host's stderr is not
      // the place for them (a crash is reported as the call's fault instead).
      emscriptenModule: QUIET,
    }),
  );
  setup = {
    memoryLimitBytes: Math.max(1024 * 1024, maximum * PAGE - HEAP_RESERVE_BYTES),
    memoryCapBytes: maximum * PAGE,
    wasmBytes: () => memory?.buffer.byteLength ?? 0,
    stackBytes: msg.stackBytes,
  };
  send({ type: "ready", permissions: permissionStates() });
}

function permissionStates(): Record<string, string> {
  const states: Record<string, string> = {};
  for (const name of ["read", "write", "net", "env", "run", "ffi", "sys", "import"] as const) {
    try {
      states[name] = Deno.permissions.querySync({ name }).state;
    } catch (e) {
      states[name] = `unknown (${e instanceof Error ? e.message : String(e)})`;
    }
  }
  return states;
}

function call(msg: CallMessage): void {
  if (!module || !setup) {
    send({
      type: "result",
      id: msg.id,
      outcome: { ok: false, fault: "crashed", message: "The sandbox was not started" },
      logs: [],
      poisoned: true,
      recycle: false,
    });
    return;
  }
  const report = runCheckerCall(module, setup, msg);
  send({
    type: "result",
    id: msg.id,
    outcome: report.outcome,
    logs: report.logs,
    poisoned: report.poisoned,
    // Wasm memory never shrinks: a worker that grew past half its cap is replaced.
    recycle: (memory?.buffer.byteLength ?? 0) > setup.memoryCapBytes / 2,
  });
}

self.onmessage = (event: MessageEvent<HostMessage>) => {
  const msg = event.data;
  if (msg.type === "init") {
    init(msg).catch((e) => {
      send({ type: "init-failed", message: e instanceof Error ? e.message : String(e) });
    });
  } else if (msg.type === "call") {
    // The pool sends one call at a time; a second one would be a pool bug.
    if (busy) throw new Error("checker worker received a call while busy");
    busy = true;
    try {
      call(msg);
    } finally {
      busy = false;
    }
  }
};
