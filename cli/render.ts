import { DvergrError, errorData } from "../core/errors.ts";
import { osProblem } from "../adapters/files/os_error.ts";
import type { CliContext } from "./context.ts";
import type { FormatValue, JsonFormat } from "../core/json_format.ts";
import { formatted } from "../core/json_document.ts";
import { importLater } from "./import_later.ts";

/**
 * The exit status of a failure, decided here at the CLI's edge: 1 when the request was valid
 * and its answer is a failure (nothing certified…), 2 for bad input or usage, 3 for a bug.
 */
export function exitCodeOf(e: unknown): 1 | 2 | 3 {
  if (!(e instanceof DvergrError)) return 3;
  return e.result ? 1 : 2;
}

/**
 * Renders a failure at the CLI boundary and returns the exit status. A DvergrError is
 * a user's mistake: message and hint, no stack. Anything else is a bug: its stack and
 * a request to report it.
 */
export async function renderError(
  e: unknown,
  ctx: CliContext,
  json: boolean,
): Promise<number> {
  // A full or read-only file system, a file where a directory must be…: the user's to fix.
  e = osProblem(e) ?? e;
  if (e instanceof DvergrError) {
    if (json) await printErrorJson(ctx, e.toJSON());
    else {
      ctx.stderr(`error[${e.code}]: ${e.message}\n`);
      if (e.hint) ctx.stderr(`hint: ${e.hint}\n`);
    }
    return exitCodeOf(e);
  }
  const err = e instanceof Error ? e : new Error(String(e));
  if (json) {
    await printErrorJson(ctx, {
      error: { ...errorData(err, { what: "The command" }), stack: err.stack },
    });
  } else {
    ctx.stderr(`internal error: ${err.stack ?? err.message}\n`);
    ctx.stderr("This is a bug in dvergr; please report it with the command you ran.\n");
  }
  return 3;
}

type ErrorFormat = typeof import("../core/json_format.ts").ERROR_FORMAT;

/** A failure as a `dvergr-error/1` document: the format's zod schema loads only here. */
async function printErrorJson(ctx: CliContext, value: FormatValue<ErrorFormat>): Promise<void> {
  const { ERROR_FORMAT } = await importLater<typeof import("../core/json_format.ts")>(
    "../core/json_format.ts",
    import.meta.url,
  );
  printJson(ctx, ERROR_FORMAT, value);
}

/** Writes a value as a document of its format (`format` first), pretty JSON on stdout. */
export function printJson<F extends JsonFormat>(
  ctx: CliContext,
  format: F,
  value: FormatValue<F>,
): void {
  ctx.stdout(JSON.stringify(formatted(format, value), null, 2) + "\n");
}
