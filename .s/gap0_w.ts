/// <reference lib="deno.worker" />

const first = performance.now();
self.onmessage = (e) => {
  const got = performance.now();
  self.postMessage({ gap: got - first, size: e.data.image?.byteLength ?? 0 });
};
