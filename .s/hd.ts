const w = new Worker(new URL(`./dyn_w.ts`, import.meta.url), { type: "module", deno: { permissions: "inherit" } });
w.postMessage(Deno.args);
w.onmessage = (e) => { console.log(e.data); w.terminate(); };
