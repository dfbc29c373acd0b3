/** Runs dvergr in-process with the host's PATH (command candidates need a shell). */
import { runMain } from "../../main.ts";
import { memoryContext } from "../../cli/context.ts";
import { detectBwrap } from "../../core/io/candidates/command.ts";

// Without bubblewrap, command candidates run only when asked for (DVERGR_ISOLATION=none):
// ask for it on machines without it, so these tests do not depend on bubblewrap.
const unisolated: Record<string, string> = (await detectBwrap((k) => Deno.env.get(k)))
  ? {}
  : { DVERGR_ISOLATION: "none" };

export async function dvergrWithPath(args: string[], env: Record<string, string> = {}) {
  const ctx = memoryContext({
    env: { PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin", ...unisolated, ...env },
  });
  const code = await runMain(args, ctx);
  return { code, out: ctx.out.join(""), err: ctx.err.join("") };
}
