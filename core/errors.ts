/**
 * The one error type of dvergr. A DvergrError is a user-facing failure: bad input,
 * bad usage, a missing file, or a valid request whose answer is a failure (`result`:
 * nothing certified, nothing to freeze). It carries a stable `code`, a message that names
 * the file/line/field at fault, and a hint; each surface decides how to show it (the CLI's
 * exit status: cli/render.ts).
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
  | "POLICY_INVALID"
  | "ROOM_INVALID"
  | "CONFLICT"
  | "IO"
  | "EVAL_FAILED"
  | "INTERNAL";

export interface DvergrErrorOptions {
  hint?: string;
  /** Structured facts for --json and MCP (file, line, problems, ids…). */
  details?: Record<string, unknown>;
  /** The request was valid and its answer is a failure (default: the input is at fault). */
  result?: boolean;
  cause?: unknown;
}

export class DvergrError extends Error {
  readonly code: ErrorCode;
  readonly hint?: string;
  readonly details?: Record<string, unknown>;
  /** See DvergrErrorOptions.result. */
  readonly result: boolean;

  constructor(code: ErrorCode, message: string, opts: DvergrErrorOptions = {}) {
    super(message, opts.cause === undefined ? undefined : { cause: opts.cause });
    this.name = "DvergrError";
    this.code = code;
    this.hint = opts.hint;
    this.details = opts.details;
    this.result = opts.result ?? false;
  }

  /** The same facts as data (errorData()), for --json output and MCP error results. */
  toJSON(): { error: ErrorData } {
    return { error: errorData(this) };
  }
}

export function isDvergrError(e: unknown): e is DvergrError {
  return e instanceof DvergrError;
}

/** A failure as data: what the CLI's --json, MCP error results and job records carry. */
export interface ErrorData {
  code: ErrorCode;
  message: string;
  hint?: string;
  details?: Record<string, unknown>;
}

/**
 * The one rendering of a failure as data. A DvergrError gives its own facts; anything else
 * is a bug: INTERNAL, its message after `what` ("The job", "The tool"…), and a hint to report
 * it (`where` names the log that has the stack).
 */
export function errorData(
  e: unknown,
  opts: { what?: string; where?: string } = {},
): ErrorData {
  if (isDvergrError(e)) {
    return {
      code: e.code,
      message: e.message,
      ...(e.hint ? { hint: e.hint } : {}),
      ...(e.details ? { details: e.details } : {}),
    };
  }
  const m = e instanceof Error ? e.message : String(e);
  return {
    code: "INTERNAL",
    message: `${opts.what ?? "dvergr"} failed unexpectedly: ${m}`,
    hint: `This is a bug in dvergr; ${opts.where ?? "please report it"}`,
  };
}

/** A usage error: wrong flags or arguments (exit 2). */
export function usageError(message: string, hint?: string): DvergrError {
  return new DvergrError("USAGE", message, { hint });
}
