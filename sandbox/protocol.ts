/**
 * The messages between the checker pool (host) and a checker worker. Plain data only:
 * everything crosses `postMessage`, and the checker's values cross as JSON text.
 */
import type { CheckerFault } from "../core/checker.ts";

/** Which export of checker.js a call runs. */
export type CheckerFunction = "check" | "judgeRequests";

/** Host → worker, once: how to build the QuickJS module and what every context gets. */
export interface InitMessage {
  type: "init";
  /** Hard cap of the worker's WebAssembly memory, in bytes. */
  memoryBytes: number;
  /** QuickJS stack limit, in bytes. */
  stackBytes: number;
}

/** Host → worker: run one export of a checker on one input. */
export interface CallMessage {
  type: "call";
  id: number;
  fn: CheckerFunction;
  /** The checker's hash: a worker keeps each checker it loaded, prepared, under it. */
  key: string;
  source: string;
  /** The input as JSON text; parsed inside the sandbox. */
  input: string;
  timeoutMs: number;
}

export type HostMessage = InitMessage | CallMessage;

/** What a call produced: the export's result as JSON text, or a fault. */
export type CallOutcome =
  | { ok: true; json: string }
  | { ok: false; fault: CheckerFault; message: string };

/** Worker → host. */
export type WorkerMessage =
  | {
    type: "ready";
    /** The worker's own view of its permissions, e.g. `{ read: "denied" }`. */
    permissions: Record<string, string>;
  }
  | { type: "init-failed"; message: string }
  | {
    type: "result";
    id: number;
    outcome: CallOutcome;
    /** What the checker wrote with console.*, bounded. */
    logs: string[];
    /** The worker's instance can no longer be trusted (a wasm trap, a failed dispose). */
    poisoned: boolean;
    /** The worker should be replaced to give its grown memory back. */
    recycle: boolean;
  };
