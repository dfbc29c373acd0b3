/**
 * The inside of a sandbox worker of either kind, whatever carries its messages (a
 * permission-less `deno run` process over stdin/stdout, or a Deno Worker with no
 * permissions): on "init" it loads QuickJS into a bounded WebAssembly memory once and boots
 * the kind's engine in it; then it answers call messages one at a time.
 *
 * Permissions: none. The QuickJS wasm (and scittle's text) are part of the module graph.
 */
import type {
  CallReport,
  CallRequest,
  HostMessage,
  InitMessage,
  WorkerMessage,
} from "./protocol.ts";
import { dropNodeProcess, type LoadedQuickJS, loadQuickJS } from "./quickjs_load.ts";
import { permissionStates } from "./permission_states.ts";
import { describeLayout, freshCopy, layoutFits, PINNED_LAYOUT } from "./known_layout.ts";
import type { MemoryLayout } from "./wasm_snapshot.ts";

/** An engine of one worker: runs any number of calls, each from a fresh interpreter state. */
export interface Engine<O> {
  /** Never throws for anything a checker does. */
  call(req: CallRequest): CallReport<O>;
  /** Whether it started from the init's boot image (Clojure engines). */
  restored?: boolean;
  /** The boot image it made, when the init asked for one (Clojure engines). */
  image?: Uint8Array | null;
  /** The checker image of a prepared checker, or null (Clojure engines). */
  checkerImage?(key: string): Uint8Array | null;
  /** The memory layout it found rather than was given (checker.js engines). */
  foundLayout?: { layout: MemoryLayout; breakValue: number };
  /** Takes a checker image as the prepared checker `key`, if it can (Clojure engines). */
  install?(key: string, image: Uint8Array): boolean;
}

/**
 * Boots a worker's engine in freshly loaded QuickJS; a throw (or a rejection) is reported as
 * "init-failed".
 */
export type BootEngine<O> = (
  quickjs: LoadedQuickJS,
  init: InitMessage,
) => Engine<O> | Promise<Engine<O>>;

/**
 * Returns the message handler of one worker; `send` carries its answers to the host.
 * The handler never throws: a failed start is an "init-failed" message.
 */
export function createWorkerService<O extends { ok: boolean }>(
  send: (message: WorkerMessage<O>) => void,
  boot: BootEngine<O>,
  /** What the "not started" fault says the sandbox is, e.g. "The Clojure sandbox". */
  sandboxName: string,
): (message: HostMessage) => Promise<void> {
  let engine: Engine<O> | undefined;
  let quickjs: LoadedQuickJS | undefined;
  /** The host keeps images: each checker this worker loads is sent back as one. */
  let keepImages = false;

  async function init(msg: InitMessage): Promise<void> {
    const started = performance.now();
    // This service runs only as a sandbox worker: QuickJS loads faster without `process`.
    dropNodeProcess();
    quickjs = await loadQuickJS(msg.memoryBytes);
    // A layout from the host (none: the pinned module's) is used only when it is this
    // module's; else the engine finds it and it goes back to the host for the next worker.
    const layout = await layoutFits(msg.layout ?? PINNED_LAYOUT, quickjs.memory);
    const fresh = layout ? undefined : freshCopy(quickjs.memory);
    const freshBytes = quickjs.memory.buffer.byteLength;
    engine = await boot(quickjs, { ...msg, layout });
    const { foundLayout } = engine;
    const found = fresh && foundLayout &&
      await describeLayout(fresh, freshBytes, foundLayout.layout, foundLayout.breakValue);
    keepImages = msg.keepImage === true;
    const image = engine.image ?? undefined;
    // Sent once: the worker need not keep its copy.
    engine.image = null;
    send({
      type: "ready",
      permissions: permissionStates(),
      bootMs: Math.round(performance.now() - started),
      ...(engine.restored ? { restored: true } : {}),
      ...(found ? { layout: found } : {}),
      ...(image ? { image } : {}),
    });
  }

  function call(msg: CallRequest & { id: number }): void {
    if (!engine || !quickjs) {
      const outcome = { ok: false, fault: "crashed", message: `${sandboxName} was not started` };
      send({
        type: "result",
        id: msg.id,
        outcome: outcome as unknown as O,
        logs: [],
        poisoned: true,
        recycle: false,
        loaded: false,
      });
      return;
    }
    const started = performance.now();
    const report = engine.call(msg);
    const ranMs = performance.now() - started;
    const image = keepImages && report.loaded ? engine.checkerImage?.(msg.key) : null;
    send({
      type: "result",
      id: msg.id,
      ...report,
      ranMs,
      ...(image ? { image } : {}),
      // Wasm memory never shrinks: a worker that grew past half its cap is replaced.
      recycle: quickjs.memory.buffer.byteLength > quickjs.capBytes / 2,
    });
  }

  return async (msg) => {
    if (msg.type === "init") {
      try {
        await init(msg);
      } catch (e) {
        send({ type: "init-failed", message: e instanceof Error ? e.message : String(e) });
      }
    } else if (msg.type === "call") {
      call(msg);
    } else if (msg.type === "prepared") {
      engine?.install?.(msg.key, msg.image);
    }
  };
}
