/** Runs dvergr in-process with the host's PATH (command candidates need a shell). */
import { runMain } from "../../main.ts";
import { memoryContext } from "../../cli/context.ts";

export async function dvergrWithPath(args: string[], env: Record<string, string> = {}) {
  const ctx = memoryContext({ env: { PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin", ...env } });
  const code = await runMain(args, ctx);
  return { code, out: ctx.out.join(""), err: ctx.err.join("") };
}
