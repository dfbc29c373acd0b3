/// <reference lib="deno.worker" />
import "@jitl/quickjs-wasmfile-release-sync/wasm" with { type: "bytes" };
self.postMessage({ t: performance.timeOrigin + performance.now() });
