/**
 * The messages between a worker pool (host) and a sandbox worker, for both worker kinds
 * (checker.js in QuickJS, checker.clj in SCI in QuickJS): plain data only, since everything
 * crosses `postMessage` or a JSON line; the checker's values cross as text (JSON or EDN).
 */
import type { CheckerFault } from "../core/checker.ts";
import type { KnownLayout } from "./known_layout.ts";

/**
 * Which function of a checker a call runs (`judge-requests` in checker.clj); `generate` is
 * generator.js's, run in the same sandbox.
 */
export type CheckerFunction = "check" | "judgeRequests" | "generate";

/** Host → worker, once: how large its WebAssembly memory and QuickJS stack may grow. */
export interface InitMessage {
  type: "init";
  /** Hard cap of the worker's WebAssembly memory, in bytes. */
  memoryBytes: number;
  /** QuickJS stack limit, in bytes. */
  stackBytes: number;
  /**
   * A boot image to restore instead of booting: a Clojure worker's (sandbox/sci_image.ts),
   * instead of booting SCI; a checker.js worker's as its file's bytes
   * (sandbox/quickjs_image.ts), instead of running the prelude. Ignored by a module it does
   * not fit.
   */
  image?: Uint8Array;
  /** A worker that boots (SCI, or the prelude) sends its boot image back in "ready". */
  keepImage?: boolean;
  /**
   * The memory layout an earlier worker found in QuickJS's module (sandbox/known_layout.ts),
   * used when it fits this worker's module; checker.js workers only.
   */
  layout?: KnownLayout;
}

/** One call of a checker function on one input, as a worker's engine receives it. */
export interface CallRequest {
  fn: CheckerFunction;
  /** Names the checker source (the pool uses its SHA-256): a worker keeps each it loaded. */
  key: string;
  source: string;
  /** The input as text (JSON for checker.js, tagged JSON for checker.clj). */
  input: string;
  timeoutMs: number;
}

/** Host → worker: run one call. */
export interface CallMessage extends CallRequest {
  type: "call";
  id: number;
}

/**
 * Host → Clojure worker, after init: a checker image (sandbox/sci_image.ts) made on the
 * same boot image, so the checker's first call here loads nothing; a worker that cannot
 * use it ignores it.
 */
export interface PreparedMessage {
  type: "prepared";
  key: string;
  image: Uint8Array;
}

export type HostMessage = InitMessage | CallMessage | PreparedMessage;

/** A call that produced no result, and why. */
export type Faulted = { ok: false; fault: CheckerFault; message: string };

/** What a checker.js call produced: the export's result as JSON text, or a fault. */
export type CallOutcome = { ok: true; json: string } | Faulted;

/** What an engine reports about one call. */
export interface CallReport<O = CallOutcome> {
  outcome: O;
  /** What the checker wrote to its console, bounded. */
  logs: string[];
  /** The engine can no longer be trusted (a wasm trap, a host stack overflow): replace it. */
  poisoned: boolean;
  /** The checker was loaded for this call rather than found prepared. */
  loaded: boolean;
}

/** Worker → host. */
export type WorkerMessage<O = CallOutcome> =
  | {
    type: "ready";
    /** The worker's own view of its permissions, e.g. `{ read: "denied" }`. */
    permissions: Record<string, string>;
    /** How long the worker took to load its engine. */
    bootMs: number;
    /** The engine started from the init's boot image. */
    restored?: boolean;
    /** The boot image the worker made, when the init asked for one (`keepImage`). */
    image?: Uint8Array;
    /** The memory layout the worker found, when it was given none that fit. */
    layout?: KnownLayout;
  }
  | { type: "init-failed"; message: string }
  | ({
    type: "result";
    id: number;
    /** The worker should be replaced to give its grown memory back. */
    recycle: boolean;
    /** The checker image of the checker this call loaded, when the init asked for images. */
    image?: Uint8Array;
    /**
     * How long the call ran in the worker, in ms (the host's own measure also counts the
     * time the answer waited for a busy host).
     */
    ranMs?: number;
  } & CallReport<O>);
