import { parseCommandArgs } from "./args.ts";
import { parseRoomName } from "./bundle_arg.ts";
import type { CliContext } from "./context.ts";
import { HOME_HELP, roomHomeDir, withOpContext } from "./home_arg.ts";
import { printJson } from "./render.ts";
import { checkLines, runLine } from "./verdict_text.ts";
import { usageError } from "../core/errors.ts";
import { callOp } from "../core/ops/registry.ts";
import { catalogPromote } from "../core/ops/catalog_bundles.ts";

export const HELP = `dvergr promote ROOM/NAME [--home DIR] [--verbose] [--json]

Calibrates bundle workflows/NAME/ of room ROOM now and, only when that holds, records its
content id as promoted in the home (outside every room, so nothing in a room can forge it).
From then on its checker's trust tier on this host is room, under any name and in any room;
a changed bundle has a new id and is ad-hoc again. Only host code is trusted.

Exit status: 0 promoted; 1 it does not calibrate (not promoted); 2 bad input.

Options:
${HOME_HELP}
  --verbose       list every check of the calibration runs
  --json          print the calibration and the promotion as JSON
  -h, --help      show this help

Example:
  dvergr promote contracts/recall
`;

export const OPTIONS = {
  home: { type: "string" },
  verbose: { type: "boolean" },
  json: { type: "boolean" },
} as const;

/** Reads the command line: flags and arguments checked, nothing touched. */
export function parse(args: string[]) {
  const { values, positionals } = parseCommandArgs("promote", args, OPTIONS);
  return { values, positionals };
}

export async function run(ctx: CliContext, opts: ReturnType<typeof parse>): Promise<number> {
  const { values, positionals } = opts;
  const ref = positionals.length === 1 ? parseRoomName(positionals[0]) : null;
  if (!ref) {
    throw usageError(
      `"dvergr promote" takes one ROOM/NAME${
        positionals.length ? `, got ${positionals.map((p) => JSON.stringify(p)).join(" ")}` : ""
      }`,
      "Promotion is of a bundle in a room: import or write it into one first, then run `dvergr promote ROOM/NAME`",
    );
  }
  const home = roomHomeDir(values.home, ctx);
  const r = await withOpContext(ctx, home, {}, (op) => callOp(catalogPromote, op, ref));
  if (values.json) {
    printJson(ctx, catalogPromote.output, r);
    return r.promoted ? 0 : 1;
  }
  const out = (s: string) => ctx.stdout(s + "\n");
  out(`Calibrating ${r.room}/${r.bundle}  ${r.bundleId}`);
  const cal = r.calibration;
  if (cal.reference) {
    out(`  reference                 ${runLine(cal.reference)}`);
    if (values.verbose) checkLines(cal.reference, "      ").forEach(out);
  }
  for (const [name, v] of Object.entries(cal.damaged)) {
    out(`  ${v.ok ? "ok  " : "BAD "}${name.padEnd(22)}${runLine(v.run)}`);
    if (values.verbose) checkLines(v.run, "      ").forEach(out);
  }
  if (!r.promoted) {
    out(`NOT CALIBRATED: ${cal.problems.length} problem${cal.problems.length === 1 ? "" : "s"}`);
    for (const p of cal.problems) out(`  - ${p}`);
    out(`Not promoted: its trust tier stays ${r.tier}`);
    return 1;
  }
  out(
    r.previous
      ? `Calibrated; this content was already promoted (as ${r.previous.room}/${r.previous.bundle} at ${r.previous.at}): trust tier room`
      : "Calibrated and promoted: its checker's trust tier on this host is now room",
  );
  return 0;
}
