/**
 * Text from candidates and bundles (stderr tails, check names, causes, case ids, file names)
 * made safe to show on a terminal: no character of it can move the cursor, clear the screen,
 * retitle the window, ring the bell, overwrite what was printed, or reorder what is shown.
 */

/**
 * C0 controls but tab and newline (ESC, CR, BEL, backspace…), DEL, C1 controls, and the bidi
 * embeddings, overrides and isolates (U+202A–U+202E, U+2066–U+2069).
 */
// deno-lint-ignore no-control-regex -- control characters are exactly what is replaced
const UNSAFE = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g;

const SHORT: Record<string, string> = { "\b": "\\b", "\f": "\\f", "\r": "\\r" };

function escaped(c: string): string {
  return SHORT[c] ?? "\\u" + c.charCodeAt(0).toString(16).padStart(4, "0");
}

/**
 * `text` with every control character but tab and newline, and every bidi override, written
 * as a visible escape (`\r`, `\u001b`, `\u202e`). The escapes are JSON's, and JSON text never
 * holds these characters outside strings, so JSON stays valid and means the same.
 */
export function terminalSafe(text: string): string {
  return text.replace(UNSAFE, escaped);
}
