/// <reference lib="deno.worker" />
import "../sandbox/quickjs_load.ts";
self.postMessage({ t: performance.timeOrigin + performance.now() });
