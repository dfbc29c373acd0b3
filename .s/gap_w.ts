/// <reference lib="deno.worker" />
import "../sandbox/checker_service.ts";
const first = performance.now();
self.onmessage = (e) => {
  const got = performance.now();
  self.postMessage({ gap: got - first, size: e.data.image?.byteLength ?? 0 });
};
