/**
 * The messages between the Clojure pool (host) and a Clojure worker. Plain data only.
 */
import type { ClojureCallRequest, ClojureOutcome } from "./sci_engine.ts";

/** Host → worker, once: the wasm memory cap and the QuickJS stack. */
export interface ClojureInitMessage {
  type: "init";
  memoryBytes: number;
  stackBytes: number;
}

/** Host → worker: one call (the input is tagged JSON text). */
export interface ClojureCallMessage extends ClojureCallRequest {
  type: "call";
  id: number;
}

export type ClojureHostMessage = ClojureInitMessage | ClojureCallMessage;

/** Worker → host. */
export type ClojureWorkerMessage =
  | {
    type: "ready";
    /** The worker's own view of its permissions, e.g. `{ read: "denied" }`. */
    permissions: Record<string, string>;
    bootMs: number;
  }
  | { type: "init-failed"; message: string }
  | {
    type: "result";
    id: number;
    outcome: ClojureOutcome;
    logs: string[];
    /** Replace the worker: it can no longer be trusted. */
    poisoned: boolean;
    /** Replace the worker to give its grown memory back. */
    recycle: boolean;
    /** The checker was loaded for this call rather than found prepared. */
    loaded: boolean;
  };
