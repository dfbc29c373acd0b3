const which = Deno.args[0];
const t0 = performance.timeOrigin + performance.now();
const w = new Worker(new URL(`./${which}.ts`, import.meta.url), { type: "module", deno: { permissions: "none" } });
const t1 = performance.timeOrigin + performance.now();
w.onmessage = (e) => { console.log(which, (t1 - t0).toFixed(1), (e.data.t - t0).toFixed(1)); w.terminate(); };
