/**
 * Runs `dvergr benchmark BUNDLE --candidate builtin:reference --home HOME` in this process
 * (a process of its own, started by tests/cli/benchmark_lazy_test.ts) and prints whether zod
 * was evaluated meanwhile: zod's core module sets globalThis.__zod_globalConfig when it loads.
 */
import { runMain } from "../../main.ts";
import { memoryContext } from "../../cli/context.ts";

const [bundle, home] = Deno.args;
const ctx = memoryContext({ env: { PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin" } });
const code = await runMain(
  ["benchmark", bundle, "--candidate", "builtin:reference", "--home", home],
  ctx,
);
const zod = "__zod_globalConfig" in globalThis;
const seen = JSON.stringify({ code, zod, out: ctx.out.join(""), err: ctx.err.join("") });
Deno.stdout.writeSync(new TextEncoder().encode(seen + "\n"));
