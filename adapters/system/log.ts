/** A log line on the process's stderr (stdout may be a protocol: MCP over stdio). */
import { terminalSafe } from "../../core/terminal_safe.ts";

const encoder = new TextEncoder();

/** Writes `line` to stderr, its control characters shown as escapes (terminalSafe()). */
export function stderrLog(line: string): void {
  const safe = terminalSafe(line);
  const bytes = encoder.encode(safe.endsWith("\n") ? safe : safe + "\n");
  let off = 0;
  while (off < bytes.length) off += Deno.stderr.writeSync(bytes.subarray(off));
}
