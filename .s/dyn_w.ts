/// <reference lib="deno.worker" />
self.onmessage = async (e) => {
  const out: string[] = [];
  for (const spec of e.data as string[]) {
    const t = performance.now();
    if (spec.endsWith("/wasm")) await import(spec, { with: { type: "bytes" } });
    else await import(spec);
    out.push(`${spec.split("/").pop()}=${(performance.now() - t).toFixed(1)}`);
  }
  self.postMessage(out.join(" "));
};
