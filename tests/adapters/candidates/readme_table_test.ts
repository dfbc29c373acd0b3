/**
 * The README's candidate table, `dvergr benchmark --help` and catalog_benchmark's schema all
 * say what the candidate kinds' describe() says: a new kind shows up in each.
 */
import assert from "node:assert/strict";
import { candidateKinds } from "../../../adapters/candidates/registry.ts";
import { composeServices } from "../../../adapters/compose.ts";
import { HELP } from "../../../cli/benchmark.ts";
import { candidateFormsDoc, candidateFormsTable } from "../../../core/ops/benchmark_request.ts";
import { catalogBenchmark } from "../../../core/ops/catalog_run.ts";
import { explainedOp } from "../../../core/ops/op.ts";
import { toolDefinition } from "../../../mcp/tool_schema.ts";

const README = new URL("../../../README.md", import.meta.url);

/** A Markdown table's rows as trimmed cells, its separator row left out. */
function cells(rows: string[]): string[][] {
  return rows
    .map((r) => r.trim().replace(/^\||\|$/g, "").split("|").map((c) => c.trim()))
    .filter((r) => !r.every((c) => /^-+$/.test(c)));
}

Deno.test("the README's candidate table is the candidate kinds' describe()", async () => {
  const readme = (await Deno.readTextFile(README)).split("\n");
  const start = readme.findIndex((l) => /^\| Spec +\| Candidate +\| Example +\|$/.test(l));
  assert.ok(start >= 0, "README has a table | Spec | Candidate | Example |");
  const end = readme.findIndex((l, i) => i > start && !l.startsWith("|"));
  assert.deepEqual(
    cells(readme.slice(start, end)),
    cells(candidateFormsTable(candidateKinds.describe())),
  );
});

Deno.test("benchmark --help and catalog_benchmark's schema list every form the kinds describe", () => {
  const kinds = candidateKinds.describe();
  for (const f of kinds.flatMap((k) => k.forms)) {
    assert.match(HELP, new RegExp(`^ {26}${f.form.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")} `, "m"));
  }
  const tool = toolDefinition(explainedOp(catalogBenchmark, composeServices()));
  const props =
    (tool.inputSchema as unknown as { properties: Record<string, { description?: string }> })
      .properties;
  const doc = props.candidates.description ?? "";
  assert.equal(doc, candidateFormsDoc(kinds));
  for (const k of kinds) {
    for (const f of k.forms) {
      // Accepted forms are listed with their example; inline commands as not accepted.
      assert.equal(doc.includes(`e.g. ${f.example}`), !k.inlineCommand, f.form);
    }
  }
  assert.match(doc, /Not accepted here: NAME=cmd:COMMAND/);
  assert.ok(tool.description?.includes("agent:CLI:MODEL"), tool.description);
});
