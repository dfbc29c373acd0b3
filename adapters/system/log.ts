/** A log line on the process's stderr (stdout may be a protocol: MCP over stdio). */
const encoder = new TextEncoder();

export function stderrLog(line: string): void {
  const bytes = encoder.encode(line.endsWith("\n") ? line : line + "\n");
  let off = 0;
  while (off < bytes.length) off += Deno.stderr.writeSync(bytes.subarray(off));
}
