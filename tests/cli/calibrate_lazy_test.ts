/**
 * `dvergr calibrate` loads the automatic mutations (core/calibrate/auto.ts and its
 * mutations) only with --auto, and the generated worlds' module only for a bundle with
 * generator.js: neither is in the static graph of cli/calibrate.ts (~2.6 ms of its start).
 */
import assert from "node:assert/strict";

interface InfoModule {
  specifier: string;
  dependencies?: { code?: { specifier?: string }; isDynamic?: boolean }[];
}

/** The modules `root` evaluates before it runs: its static imports, not type-only ones. */
async function staticGraph(root: URL): Promise<Set<string>> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["info", "--json", root.pathname],
    stdout: "piped",
    stderr: "piped",
  }).output();
  assert.ok(out.success, new TextDecoder().decode(out.stderr));
  const modules = new Map<string, InfoModule>(
    (JSON.parse(new TextDecoder().decode(out.stdout)).modules as InfoModule[])
      .map((m) => [m.specifier, m]),
  );
  const seen = new Set<string>();
  const stack = [root.href];
  while (stack.length > 0) {
    const s = stack.pop()!;
    if (seen.has(s) || !modules.has(s)) continue;
    seen.add(s);
    for (const d of modules.get(s)!.dependencies ?? []) {
      if (d.code?.specifier && !d.isDynamic) stack.push(d.code.specifier);
    }
  }
  return seen;
}

Deno.test("dvergr calibrate's modules leave out the automatic mutations and generated worlds", async () => {
  const graph = await staticGraph(new URL("../../cli/calibrate.ts", import.meta.url));
  assert.ok(graph.has(new URL("../../core/calibrate/calibrate.ts", import.meta.url).href));
  for (
    const lazy of [
      "core/calibrate/auto.ts",
      "core/calibrate/mutations.ts",
      "core/bundle/generated_cases.ts",
    ]
  ) {
    assert.ok(!graph.has(new URL(`../../${lazy}`, import.meta.url).href), lazy);
  }
});
