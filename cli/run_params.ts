/**
 * `--param K=V` flags kept as text (what run and schedule records hold), each checked by the
 * one rule of core/bundle/params.ts so a bad value fails now.
 */
import { readParamFlag } from "../core/bundle/params.ts";

/** Repeated `--param K=V` as name → text (a later K wins). */
export function paramTexts(flags: readonly string[], command: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const f of flags) {
    const [name] = readParamFlag(f, command);
    out[name] = f.slice(f.indexOf("=") + 1);
  }
  return out;
}
