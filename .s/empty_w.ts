/// <reference lib="deno.worker" />
self.postMessage({ t: performance.timeOrigin + performance.now() });
