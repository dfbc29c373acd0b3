const big = Deno.args[0] === "big";
const w = new Worker(new URL(`./gap0_w.ts`, import.meta.url), { type: "module", deno: { permissions: "none" } });
w.postMessage({ type: "init", image: big ? new Uint8Array(221 * 1024) : undefined });
w.onmessage = (e) => { console.log(Deno.args[0], e.data.gap.toFixed(2)); w.terminate(); };
