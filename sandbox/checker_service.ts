/**
 * The inside of a checker worker, whatever carries its messages (a permission-less Deno
 * Worker, or a `deno run` process with no permissions talking over stdin/stdout): loads
 * QuickJS once (the wasm is embedded in the module, so it needs no permission), prepares one
 * QuickJSSandbox, and answers call messages one at a time.
 */
import type { CallMessage, HostMessage, InitMessage, WorkerMessage } from "./protocol.ts";
import { QuickJSSandbox } from "./quickjs_call.ts";
import { loadQuickJS } from "./quickjs_load.ts";
import { permissionStates } from "./permission_states.ts";

/**
 * Returns the message handler of one checker worker; `send` carries its answers to the host.
 * Permissions: none.
 */
export function createCheckerService(
  send: (message: WorkerMessage) => void,
): (message: HostMessage) => Promise<void> {
  let memory: WebAssembly.Memory | undefined;
  let sandbox: QuickJSSandbox | undefined;
  let capBytes = 0;

  async function init(msg: InitMessage): Promise<void> {
    const loaded = await loadQuickJS(msg.memoryBytes);
    memory = loaded.memory;
    const mem = memory;
    capBytes = loaded.capBytes;
    sandbox = new QuickJSSandbox(loaded.module, mem, {
      memoryLimitBytes: loaded.heapLimitBytes,
      memoryCapBytes: capBytes,
      wasmBytes: () => mem.buffer.byteLength,
      stackBytes: msg.stackBytes,
    });
    send({ type: "ready", permissions: permissionStates() });
  }

  function call(msg: CallMessage): void {
    if (!sandbox) {
      send({
        type: "result",
        id: msg.id,
        outcome: { ok: false, fault: "crashed", message: "The sandbox was not started" },
        logs: [],
        poisoned: true,
        recycle: false,
      });
      return;
    }
    const report = sandbox.run(msg);
    send({
      type: "result",
      id: msg.id,
      outcome: report.outcome,
      logs: report.logs,
      poisoned: report.poisoned,
      // Wasm memory never shrinks: a worker that grew past half its cap is replaced.
      recycle: (memory?.buffer.byteLength ?? 0) > capBytes / 2,
    });
  }

  return async (msg: HostMessage) => {
    if (msg.type === "init") {
      try {
        await init(msg);
      } catch (e) {
        send({ type: "init-failed", message: e instanceof Error ? e.message : String(e) });
      }
    } else if (msg.type === "call") {
      call(msg);
    }
  };
}
