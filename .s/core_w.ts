/// <reference lib="deno.worker" />
import "quickjs-emscripten-core";
self.postMessage({ t: performance.timeOrigin + performance.now() });
