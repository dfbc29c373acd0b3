/// <reference lib="deno.worker" />
import "../sandbox/checker_service.ts";
self.postMessage({ t: performance.timeOrigin + performance.now() });
