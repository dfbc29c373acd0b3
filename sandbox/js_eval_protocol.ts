/** Messages between js_eval's host (sandbox/js_eval.ts) and its worker (js_eval_worker.ts). */

export interface EvalRun {
  type: "run";
  code: string;
  /** The op names the program may call as ops.<name>(args). */
  ops: string[];
  timeoutMs: number;
  memoryBytes: number;
}

/** The answer to an op call: its result as JSON text, or the error the call gave. */
export interface EvalReply {
  type: "reply";
  id: number;
  ok: boolean;
  /** JSON text of the value (ok), or of `{code, message, hint}` (not ok). */
  json: string;
}

export type HostToEval = EvalRun | EvalReply;

export interface EvalCall {
  type: "call";
  id: number;
  op: string;
  /** The arguments as JSON text, made by JSON.stringify inside the sandbox. */
  args: string;
}

export interface EvalDone {
  type: "done";
  ok: boolean;
  /** JSON text of the program's value (ok), or null when it has none (undefined). */
  json: string | null;
  /** Why it failed (not ok): the thrown error, a timeout, memory exhausted. */
  error?: string;
  logs: string[];
}

export type EvalToHost = EvalCall | EvalDone;
