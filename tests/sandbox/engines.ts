/** Test helpers: sandbox engines in a fresh QuickJS module, and looking inside their memory. */
import { SciEngine } from "../../sandbox/sci_engine.ts";
import { SCITTLE_SOURCE } from "../../sandbox/scittle_source.ts";
import { instantiateQuickJS } from "../../sandbox/quickjs_load.ts";

/** SCI booted in a new module of at most 256 MiB; `memory` is its wasm memory. */
export async function bootSci(
  stackBytes: number,
  image: { image?: Uint8Array; keepImage?: boolean } = {},
): Promise<{ engine: SciEngine; memory: WebAssembly.Memory }> {
  const memory = new WebAssembly.Memory({ initial: 256, maximum: 4096 });
  const module = await instantiateQuickJS(memory);
  const engine = SciEngine.boot(module, memory, SCITTLE_SOURCE, {
    memoryLimitBytes: 200 * 1024 * 1024,
    memoryCapBytes: 256 * 1024 * 1024,
    stackBytes,
    ...image,
  });
  return { engine, memory };
}

/** Whether `text` (ASCII) stands anywhere in a wasm memory. */
export function inMemory(memory: WebAssembly.Memory, text: string): boolean {
  const hay = new Uint8Array(memory.buffer);
  const needle = new TextEncoder().encode(text);
  for (let i = hay.indexOf(needle[0]); i >= 0; i = hay.indexOf(needle[0], i + 1)) {
    let k = 1;
    while (k < needle.length && hay[i + k] === needle[k]) k++;
    if (k === needle.length) return true;
  }
  return false;
}
