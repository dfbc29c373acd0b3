/**
 * The static module graph of a root module, as `deno info --json` gives it: what `deno run`
 * loads and evaluates before the root runs (its static imports; not dynamic ones, not
 * type-only ones). For the tests that pin a lazy boundary (a module a command leaves out).
 */
import assert from "node:assert/strict";

interface InfoModule {
  specifier: string;
  dependencies?: { code?: { specifier?: string }; isDynamic?: boolean }[];
}

/** The specifiers of the modules `root` evaluates before it runs. */
export async function staticGraph(root: URL): Promise<Set<string>> {
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
