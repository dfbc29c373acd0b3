/**
 * The inside of a Clojure checker worker, whatever carries its messages (a permission-less
 * Deno Worker today; a permission-less process works the same): checks scittle's text
 * against its SHA-256, boots SCI inside QuickJS once (sandbox/sci_engine.ts) and answers
 * call messages one at a time.
 *
 * Permissions: none. scittle's text and the QuickJS wasm are part of the module graph.
 */
import {
  type CustomizeVariantOptions,
  newQuickJSWASMModuleFromVariant,
  newVariant,
} from "quickjs-emscripten-core";
import variant from "@jitl/quickjs-singlefile-mjs-release-sync";
import type {
  ClojureCallMessage,
  ClojureHostMessage,
  ClojureInitMessage,
  ClojureWorkerMessage,
} from "./clojure_protocol.ts";
import { permissionStates } from "./permission_states.ts";
import { SciEngine } from "./sci_engine.ts";
import { SCITTLE_SHA256, SCITTLE_SOURCE, sha256Hex } from "./scittle_source.ts";

const PAGE = 64 * 1024;
/** The module's own minimum (its static data and C stack live in the same memory). */
const INITIAL_PAGES = 256;
/** What the QuickJS heap may use below the wasm cap, leaving room for the C stack. */
const HEAP_RESERVE_BYTES = 8 * 1024 * 1024;

/** Emscripten reads `print`/`printErr` from its module options; its types omit them. */
const QUIET = { print: () => {}, printErr: () => {} } as unknown as NonNullable<
  CustomizeVariantOptions["emscriptenModule"]
>;

/**
 * Returns the message handler of one Clojure worker; `send` carries its answers to the
 * host. The handler never throws: a failed start is an "init-failed" message.
 */
export function createClojureService(
  send: (message: ClojureWorkerMessage) => void,
): (message: ClojureHostMessage) => Promise<void> {
  let engine: SciEngine | undefined;
  let memory: WebAssembly.Memory | undefined;
  let capBytes = 0;

  async function init(msg: ClojureInitMessage): Promise<void> {
    const started = performance.now();
    const sha = await sha256Hex(SCITTLE_SOURCE);
    if (sha !== SCITTLE_SHA256) {
      throw new Error(
        `scittle's dist/scittle.js is not the one dvergr was built with (sha256 ${sha}, expected ${SCITTLE_SHA256}): run \`deno install --frozen\``,
      );
    }
    const maximum = Math.max(INITIAL_PAGES, Math.ceil(msg.memoryBytes / PAGE));
    capBytes = maximum * PAGE;
    memory = new WebAssembly.Memory({ initial: INITIAL_PAGES, maximum });
    const module = await newQuickJSWASMModuleFromVariant(
      newVariant(variant, { wasmMemory: memory, emscriptenModule: QUIET }),
    );
    engine = SciEngine.boot(module, memory, SCITTLE_SOURCE, {
      memoryLimitBytes: Math.max(32 * 1024 * 1024, capBytes - HEAP_RESERVE_BYTES),
      memoryCapBytes: capBytes,
      stackBytes: msg.stackBytes,
    });
    send({
      type: "ready",
      permissions: permissionStates(),
      bootMs: Math.round(performance.now() - started),
    });
  }

  function call(msg: ClojureCallMessage): void {
    if (!engine || !memory) {
      send({
        type: "result",
        id: msg.id,
        outcome: { ok: false, fault: "crashed", message: "The Clojure sandbox was not started" },
        logs: [],
        poisoned: true,
        recycle: false,
        loaded: false,
      });
      return;
    }
    const report = engine.call(msg);
    send({
      type: "result",
      id: msg.id,
      outcome: report.outcome,
      logs: report.logs,
      poisoned: report.poisoned,
      // Wasm memory never shrinks: a worker that grew past half its cap is replaced.
      recycle: memory.buffer.byteLength > capBytes / 2,
      loaded: report.loaded,
    });
  }

  return async (message) => {
    if (message.type === "init") {
      try {
        await init(message);
      } catch (e) {
        send({ type: "init-failed", message: e instanceof Error ? e.message : String(e) });
      }
    } else if (message.type === "call") {
      call(message);
    }
  };
}
