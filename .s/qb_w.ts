/// <reference lib="deno.worker" />
import { dropNodeProcess, loadQuickJS } from "./ql_b.ts";
const first = performance.timeOrigin + performance.now();
dropNodeProcess();
const q = await loadQuickJS(64 << 20);
self.postMessage({ first, t: performance.timeOrigin + performance.now(), ok: !!q.module });
