/**
 * The one error type of dvergr. A DvergrError is a user-facing failure: bad input,
 * bad usage, a missing file. It carries a stable `code`, a message that names the
 * file/line/field at fault, a hint, and the exit status the CLI should use.
 * Anything that is not a DvergrError is a bug and is reported with its stack.
 */
export type ErrorCode =
  | "USAGE"
  | "NOT_FOUND"
  | "EDN_SYNTAX"
  | "BUNDLE_INVALID"
  | "PATH_INVALID"
  | "TABLE_INVALID"
  | "SPEC_INVALID"
  | "NOT_CERTIFIED"
  | "EXPORT_INVALID"
  | "EXPORT_TAMPERED"
  | "TARGET_EXISTS"
  | "CHECKER_FAULT"
  | "CANDIDATE_INVALID"
  | "MODEL_UNKNOWN"
  | "API_KEY_MISSING"
  | "AGENT_CLI_MISSING"
  | "REGISTRY_INVALID"
  | "ROOM_INVALID"
  | "CONFLICT"
  | "IO"
  | "EVAL_FAILED"
  | "INTERNAL";

export interface DvergrErrorOptions {
  hint?: string;
  /** Structured facts for --json and MCP (file, line, problems, ids…). */
  details?: Record<string, unknown>;
  /** Exit status for the CLI: 2 (bad input or usage, the default) or 1 (a failed result). */
  exit?: 1 | 2;
  cause?: unknown;
}

export class DvergrError extends Error {
  readonly code: ErrorCode;
  readonly hint?: string;
  readonly details?: Record<string, unknown>;
  readonly exit: 1 | 2;

  constructor(code: ErrorCode, message: string, opts: DvergrErrorOptions = {}) {
    super(message, opts.cause === undefined ? undefined : { cause: opts.cause });
    this.name = "DvergrError";
    this.code = code;
    this.hint = opts.hint;
    this.details = opts.details;
    this.exit = opts.exit ?? 2;
  }

  /** The same facts as data, for --json output and MCP error results. */
  toJSON(): Record<string, unknown> {
    return {
      error: {
        code: this.code,
        message: this.message,
        ...(this.hint ? { hint: this.hint } : {}),
        ...(this.details ? { details: this.details } : {}),
      },
    };
  }
}

export function isDvergrError(e: unknown): e is DvergrError {
  return e instanceof DvergrError;
}

/** A usage error: wrong flags or arguments (exit 2). */
export function usageError(message: string, hint?: string): DvergrError {
  return new DvergrError("USAGE", message, { hint });
}
