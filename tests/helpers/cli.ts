/** Runs dvergr in-process with the host's PATH (command candidates need a shell). */
import { join } from "node:path";
import { runMain } from "../../main.ts";
import { memoryContext } from "../../cli/context.ts";
import { detectBwrap } from "../../adapters/candidates/command/command.ts";
import { validJson } from "./json_schemas.ts";

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
  return checked(args, { code, out: ctx.out.join(""), err: ctx.err.join("") });
}

/** With --json, what a command prints is a document that validates against schemas/. */
function checked<R extends { out: string }>(args: string[], r: R): R {
  if (args.includes("--json") && r.out.trim() !== "") validJson(r.out, `dvergr ${args[0]} --json`);
  return r;
}

/** Runs dvergr in-process in `cwd` with an empty environment; what it printed and its exit status. */
export async function dvergrIn(cwd: string, ...args: string[]) {
  const ctx = memoryContext({ cwd });
  const code = await runMain(args, ctx);
  return checked(args, { code, out: ctx.out.join(""), err: ctx.err.join("") });
}

/** A new temporary directory holding `files` (relative path → text or bytes). */
export async function tempDirWith(
  files: Record<string, string | Uint8Array> = {},
  prefix = "dvergr-test-",
): Promise<string> {
  const dir = await Deno.makeTempDir({ prefix });
  for (const [p, content] of Object.entries(files)) {
    const full = join(dir, p);
    await Deno.mkdir(join(full, ".."), { recursive: true });
    if (typeof content === "string") await Deno.writeTextFile(full, content);
    else await Deno.writeFile(full, content);
  }
  return dir;
}

/** `cases TABLE --id ID --inputs COLS --outcome OUTCOME --out OUT` (id "id", inputs "text"). */
export function casesArgs(
  table: string,
  outcome: string,
  out: string,
  cols: { id?: string; inputs?: string } = {},
): string[] {
  const { id = "id", inputs = "text" } = cols;
  return ["cases", table, "--id", id, "--inputs", inputs, "--outcome", outcome, "--out", out];
}
