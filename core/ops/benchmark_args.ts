/**
 * The arguments of MCP `catalog_benchmark` as a zod shape, derived from the benchmark's
 * table of fields (benchmark_request.ts). Apart from that table so that `dvergr benchmark`,
 * which reads the same table for its flags, does not load zod (~20 ms of its start).
 */
import { z } from "zod";
import { RANGES } from "../ranges.ts";
import {
  BENCHMARK_FIELDS,
  type BenchmarkField,
  type BenchmarkFieldName,
  docOf,
} from "./benchmark_request.ts";

const FIELDS = Object.entries(BENCHMARK_FIELDS) as [BenchmarkFieldName, BenchmarkField][];

function zodOf(f: BenchmarkField): z.ZodType {
  const v = f.value;
  let t: z.ZodType;
  if (v.type === "number") {
    const r = RANGES[v.range];
    const n = r.integer ? z.number().int() : z.number();
    t = n.min(r.min).max(v.mcpMax ?? r.max);
  } else if (v.type === "text") t = z.string().min(1);
  else if (v.type === "choice") t = z.enum(v.values as [string, ...string[]]);
  else if (v.type === "list") t = z.array(z.string().min(1));
  else if (v.type === "switch") t = z.boolean();
  else t = z.record(z.string().min(1), z.string());
  return t.optional().describe(capitalized(docOf(f, "mcp").replaceAll("\n", " ")));
}

function capitalized(s: string): string {
  return s.charAt(0).toUpperCase() + s.slice(1);
}

/**
 * The arguments of catalog_benchmark (a zod shape), one per field with an argument;
 * `docs` replaces an argument's description (the candidate forms the kinds accept).
 */
export function benchmarkArgsShape(
  docs: Partial<Record<BenchmarkFieldName, string>> = {},
): Record<string, z.ZodType> {
  const shape: Record<string, z.ZodType> = {};
  for (const [k, f] of FIELDS) {
    if (f.arg === null) continue;
    const t = zodOf(f);
    shape[f.arg] = docs[k] ? t.describe(docs[k]) : t;
  }
  return shape;
}
