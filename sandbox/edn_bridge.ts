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
 * Returns JSON: `{"ok": value}` or `{"error": {name, message, line?, column?, hint?}}`.
 */
export function ednBridge(op: string, text: string, arg: string): string {
  try {
    if (op === "parse") {
      if (text.length > MAX_EDN_CHARS) {
        return failure("RangeError", `edn.parse: the text is too long (${text.length} characters)`);
      }
      return JSON.stringify({ ok: toPlain(readEdn(text, { file: arg || undefined })) });
    }
    if (op === "stringify") {
      return JSON.stringify({ ok: writeEdn(JSON.parse(text), { pretty: arg === "pretty" }) });
    }
    return failure("TypeError", `unknown edn operation "${op}"`);
  } catch (e) {
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

function failure(name: string, message: string): string {
  return JSON.stringify({ error: { name, message } });
}
