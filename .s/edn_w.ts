/// <reference lib="deno.worker" />
import "../sandbox/edn_bridge.ts";
self.postMessage({ t: performance.timeOrigin + performance.now() });
