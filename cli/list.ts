import { parseCommandArgs } from "./args.ts";
import type { CliContext } from "./context.ts";
import { HOME_HELP, roomHomeDir, withOpContext } from "./home_arg.ts";
import { printJson } from "./render.ts";
import { usageError } from "../core/errors.ts";
import { callOp } from "../core/ops/registry.ts";
import { catalogList } from "../core/ops/catalog_bundles.ts";

export const HELP = `dvergr list [ROOM] [--home DIR] [--json]

Lists the rooms of the home and their bundles (every workflows/<name>/workflow.edn), each
with its content id, trust tier on this host and title:

  room     its content id is promoted here (\`dvergr promote ROOM/NAME\`)
  ad-hoc   anything else (a changed byte is a new id, ad-hoc again)

Options:
${HOME_HELP}
  --json          print the rooms and bundles as JSON
  -h, --help      show this help

Example:
  dvergr list contracts --json

Exit status: 0 listed; 2 bad input (no such home or room).
`;

export const OPTIONS = {
  home: { type: "string" },
  json: { type: "boolean" },
} as const;

/** Reads the command line: flags and arguments checked, nothing touched. */
export function parse(args: string[]) {
  const { values, positionals } = parseCommandArgs("list", args, OPTIONS);
  if (positionals.length > 1) {
    throw usageError(
      `"dvergr list" takes at most one room, got ${positionals.length}`,
      "Run `dvergr list` for every room or `dvergr list ROOM` for one",
    );
  }
  return { values, positionals };
}

export async function run(ctx: CliContext, opts: ReturnType<typeof parse>): Promise<number> {
  const { values, positionals } = opts;
  const home = roomHomeDir(values.home, ctx);
  return await withOpContext(ctx, home, {}, async (op) => {
    const r = await callOp(
      catalogList,
      op,
      positionals[0] !== undefined ? { room: positionals[0] } : {},
    );
    if (values.json) {
      printJson(ctx, catalogList.output, r);
      return 0;
    }
    const out = (s: string) => ctx.stdout(s + "\n");
    if (r.rooms.length === 0) out(`No rooms in ${home}`);
    const width = Math.max(8, ...r.rooms.flatMap((x) => x.bundles.map((b) => b.bundle.length)));
    for (const room of r.rooms) {
      out(`${room.room}`);
      if (room.bundles.length === 0) out("  (no bundles)");
      for (const b of room.bundles) {
        const notes = [
          b.problems > 0 ? `${b.problems} problem${b.problems === 1 ? "" : "s"}` : "",
          b.clojureChecker ? "Clojure checker" : "",
        ].filter(Boolean);
        out(
          `  ${b.bundle.padEnd(width)}  ${b.bundleId}  ${b.tier.padEnd(6)}  ${
            b.title ?? "(no title)"
          }${notes.length ? `  (${notes.join("; ")})` : ""}`,
        );
      }
    }
    return 0;
  });
}
