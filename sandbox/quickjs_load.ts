/**
 * Loads the QuickJS wasm module into a bounded WebAssembly.Memory: `setMemoryLimit` alone
 * does not cap the memory the module grows to, the memory's maximum does. The wasm is part
 * of the module graph (a bytes import of the package's .wasm file: Deno's module loader reads
 * it, and `deno compile` embeds it), so loading needs no permission (permission-less Workers
 * and processes use it). Shared by the checker sandbox and js_eval's.
 *
 * Why the wasmfile variant and not the singlefile one, which embeds the same wasm as a 706 KB
 * escaped string literal in its 828 KB glue: V8 parsed and compiled that function and decoded
 * the string byte by byte on every worker start (a checker worker's load took ~22 ms, now
 * ~7.5); the bytes import costs a file read, and the glue is 10 KB.
 */
import {
  type CustomizeVariantOptions,
  newQuickJSWASMModuleFromVariant,
  newVariant,
  type QuickJSSyncVariant,
  type QuickJSWASMModule,
} from "quickjs-emscripten-core";
import wasmfile from "@jitl/quickjs-wasmfile-release-sync";
import wasmBytes from "@jitl/quickjs-wasmfile-release-sync/wasm" with { type: "bytes" };

/**
 * The package's types are its CommonJS ones (where a default import is the module object);
 * Deno loads its ES module, whose default export is the variant.
 */
const variant = wasmfile as unknown as QuickJSSyncVariant;

const PAGE = 64 * 1024;
/** The module's own minimum (its static data and C stack live in the same memory). */
const INITIAL_PAGES = 256;
/** What the QuickJS heap may use below the wasm cap, leaving room for the C stack. */
export const HEAP_RESERVE_BYTES = 8 * 1024 * 1024;

/** Emscripten reads `print`/`printErr` from its module options; its types omit them. */
const QUIET = { print: () => {}, printErr: () => {} } as unknown as NonNullable<
  CustomizeVariantOptions["emscriptenModule"]
>;

export interface LoadedQuickJS {
  module: QuickJSWASMModule;
  memory: WebAssembly.Memory;
  /** The memory's hard cap, in bytes. */
  capBytes: number;
  /** The QuickJS heap limit to set: the cap less room for the C stack. */
  heapLimitBytes: number;
}

/**
 * Removes Deno's Node global `process` from the realm of a sandbox worker. Emscripten's glue
 * takes its Node path when it sees one, which loads node:module, node:fs, node:path and
 * node:url (30–50 ms of a worker's start, half its QuickJS load) for nothing: the wasm comes
 * compiled, and nothing in a sandbox worker runs Node code. Only for a sandbox worker's own
 * realm, never the host's.
 */
export function dropNodeProcess(): void {
  delete (globalThis as { process?: unknown }).process;
}

/**
 * QuickJS's wasm compiled, once per realm (every module of a realm shares its code). Started
 * as this module is evaluated: V8 compiles on its own threads while the worker's start goes
 * on and its init arrives (~4 ms of it otherwise after the init). A failure is the load's.
 */
const compiled: Promise<WebAssembly.Module> = WebAssembly.compile(wasmBytes);
// Handled where the load awaits it; not an unhandled rejection before then.
compiled.catch(() => {});

/**
 * A new instance of QuickJS's module in `memory` (the memory is its only memory: what it
 * grows to is bounded by the memory's maximum). Permissions: none.
 */
export function instantiateQuickJS(memory: WebAssembly.Memory): Promise<QuickJSWASMModule> {
  return newQuickJSWASMModuleFromVariant(
    newVariant(variant, {
      wasmMemory: memory,
      wasmModule: () => compiled,
      // Emscripten prints aborts and warnings to the console; the host's stderr is not the
      // place for them (a crash is reported as the call's fault instead).
      emscriptenModule: QUIET,
    }),
  );
}

/** QuickJS in a new WebAssembly.Memory of at most `memoryBytes`. Permissions: none. */
export async function loadQuickJS(memoryBytes: number): Promise<LoadedQuickJS> {
  const maximum = Math.max(INITIAL_PAGES, Math.ceil(memoryBytes / PAGE));
  const memory = new WebAssembly.Memory({ initial: INITIAL_PAGES, maximum });
  const module = await instantiateQuickJS(memory);
  const capBytes = maximum * PAGE;
  return {
    module,
    memory,
    capBytes,
    heapLimitBytes: Math.max(1024 * 1024, capBytes - HEAP_RESERVE_BYTES),
  };
}
