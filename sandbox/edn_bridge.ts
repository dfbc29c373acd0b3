/**
 * `edn.parse` and `edn.stringify` for checkers, answered by the host's EDN reader and
 * writer inside the checker worker (which has no permissions). Only text crosses: the
 * checker hands over a string, and gets back JSON text that the sandbox parses itself,
 * so no host object ever reaches checker code. Parsing natively instead of in QuickJS
 * saves compiling ~30 KB of reader source into every fresh context (~6–9 ms a call).
 */
import { DvergrError } from "../core/errors.ts";
import { readEdn } from "../core/edn/read.ts";
import { toPlain } from "../core/edn/plain.ts";
import { writeEdn } from "../core/edn/write.ts";

/** Largest text edn.parse accepts; answers are bounded far below this by capture. */
export const MAX_EDN_CHARS = 16 * 1024 * 1024;

/**
 * Runs one bridged EDN operation. `op` "parse": `text` is EDN, `arg` the file name to
 * cite in errors. `op` "stringify": `text` is JSON of the value, `arg` "pretty" or "".
 * `op` "ready": nothing, only whether the deadline has passed.
 * Returns JSON: `{"ok": value}` or `{"error": {name, message, line?, column?, hint?}}`.
 *
 * With `deadline` (a `Date.now()` time: the checker call's), an operation that starts or
 * would finish after it answers an error instead of working on: QuickJS polls its
 * interrupt handler only every 10,000 loop iterations, so a loop over long bridged calls
 * would otherwise run far past the call's time limit.
 */
export function ednBridge(op: string, text: string, arg: string, deadline?: number): string {
  try {
    if (deadline !== undefined && Date.now() >= deadline) return outOfTime(op);
    if (op === "ready") return '{"ok":true}';
    if (op === "parse") {
      if (text.length > MAX_EDN_CHARS) {
        return failure("RangeError", `edn.parse: the text is too long (${text.length} characters)`);
      }
      const expired = deadline === undefined ? undefined : () => Date.now() > deadline;
      const value = toPlain(readEdn(text, { file: arg || undefined, expired }), expired);
      const json = JSON.stringify({ ok: value });
      return deadline !== undefined && Date.now() >= deadline ? outOfTime(op) : json;
    }
    if (op === "stringify") {
      if (text.length > MAX_EDN_CHARS) {
        return failure(
          "RangeError",
          `edn.stringify: the value is too large (${text.length} characters as JSON)`,
        );
      }
      const json = JSON.stringify({ ok: writeEdn(JSON.parse(text), { pretty: arg === "pretty" }) });
      return deadline !== undefined && Date.now() >= deadline ? outOfTime(op) : json;
    }
    return failure("TypeError", `unknown edn operation "${op}"`);
  } catch (e) {
    if (e instanceof Error && e.name === "EdnDeadlineError") return outOfTime(op);
    if (e instanceof DvergrError && e.code === "EDN_SYNTAX") {
      const d = e.details ?? {};
      return JSON.stringify({
        error: {
          name: "EdnSyntaxError",
          message: e.message,
          line: d.line,
          column: d.column,
          hint: e.hint,
        },
      });
    }
    return failure("Error", `edn.${op} failed: ${e instanceof Error ? e.message : String(e)}`);
  }
}

function outOfTime(op: string): string {
  return failure("Error", `edn.${op} stopped: the checker's time limit has passed`);
}

function failure(name: string, message: string): string {
  return JSON.stringify({ error: { name, message } });
}
