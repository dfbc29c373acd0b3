/// <reference lib="deno.worker" />
import "../sandbox/protocol.ts";
import "../sandbox/known_layout.ts";
import "../sandbox/edn_bridge.ts";
import "../sandbox/prelude.ts";
import "../sandbox/loop_guard.ts";
import "../sandbox/wasm_snapshot.ts";
import "../sandbox/fault_text.ts";
import "../sandbox/sci_image.ts";
import "../sandbox/quickjs_image.ts";
import "../sandbox/permission_states.ts";
self.postMessage({ t: performance.timeOrigin + performance.now() });
