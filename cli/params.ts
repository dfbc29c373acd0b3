import { usageError } from "../core/errors.ts";
import { readEdn } from "../core/edn/read.ts";
import { toPlain } from "../core/edn/plain.ts";

/**
 * `--param k=v` flags as a params map. The value is read as EDN when it is a
 * number, keyword, vector, map, boolean or quoted string, else taken as text.
 */
export function parseParams(command: string, flags: string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const f of flags) {
    const eq = f.indexOf("=");
    if (eq <= 0) {
      throw usageError(
        `Cannot use --param "${f}": expected name=value`,
        `For example: dvergr ${command} … --param team="the data team"`,
      );
    }
    const name = f.slice(0, eq).replace(/^:/, "");
    const raw = f.slice(eq + 1);
    let value: unknown = raw;
    if (/^([-+]?\d|[:\[{"#]|true$|false$|nil$)/.test(raw.trim())) {
      try {
        value = toPlain(readEdn(raw, { file: `--param ${name}` }));
      } catch {
        value = raw;
      }
    }
    out[name] = value;
  }
  return out;
}
