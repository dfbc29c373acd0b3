import { QuickJSWASMModule } from "quickjs-emscripten-core";
import QuickJSRaw from "@jitl/quickjs-wasmfile-release-sync/emscripten-module";
import { QuickJSFFI } from "@jitl/quickjs-wasmfile-release-sync/ffi";
import wasmBytes from "@jitl/quickjs-wasmfile-release-sync/wasm" with { type: "bytes" };
let compiled: Promise<WebAssembly.Module> | undefined;
export function dropNodeProcess(): void {
  delete (globalThis as { process?: unknown }).process;
}
export async function loadQuickJS(memoryBytes: number) {
  const memory = new WebAssembly.Memory({ initial: 256, maximum: Math.ceil(memoryBytes / 65536) });
  compiled ??= WebAssembly.compile(wasmBytes);
  const module = await compiled;
  // deno-lint-ignore no-explicit-any
  const em: any = await (QuickJSRaw as any)({
    wasmMemory: memory,
    print: () => {},
    printErr: () => {},
    // deno-lint-ignore no-explicit-any
    instantiateWasm(imports: any, done: (i: WebAssembly.Instance) => void) {
      WebAssembly.instantiate(module, imports).then(done);
      return {};
    },
  });
  em.type = "sync";
  // deno-lint-ignore no-explicit-any
  return { module: new QuickJSWASMModule(em, new (QuickJSFFI as any)(em)), memory };
}
