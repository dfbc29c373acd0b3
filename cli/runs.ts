import { parseCommandArgs } from "./args.ts";
import type { CliContext } from "./context.ts";
import { DEPLOY_HOME_HELP, withDeployOp } from "./home_arg.ts";
import { printJson } from "./render.ts";
import { usageError } from "../core/errors.ts";
import { callOp } from "../core/ops/registry.ts";
import { runList } from "../core/ops/deploy_runs.ts";

export const HELP = `dvergr runs [ROOM] [--home DIR] [--json]

Lists the home's production runs (dvergr run, and those schedules started), oldest first:
id, bundle, candidate, status and outcome, the fork's branch, and the review.

Exit status: 0 listed; 2 bad input.

Options:
${DEPLOY_HOME_HELP}
  --json          print the runs as JSON
  -h, --help      show this help

Example:
  dvergr runs wiki
`;

export const OPTIONS = {
  home: { type: "string" },
  store: { type: "string" },
  blobs: { type: "string" },
  json: { type: "boolean" },
} as const;

export function parse(args: string[]) {
  const { values, positionals } = parseCommandArgs("runs", args, OPTIONS);
  if (positionals.length > 1) {
    throw usageError(
      `"dvergr runs" takes at most one ROOM`,
      "Run `dvergr runs` or `dvergr runs ROOM`",
    );
  }
  return {
    room: positionals[0],
    home: values.home,
    store: values.store,
    blobs: values.blobs,
    json: values.json === true,
  };
}

export async function run(ctx: CliContext, opts: ReturnType<typeof parse>): Promise<number> {
  const r = await withDeployOp(
    ctx,
    opts,
    (op) => callOp(runList, op, opts.room ? { room: opts.room } : {}),
  );
  if (opts.json) {
    printJson(ctx, runList.output, r);
    return 0;
  }
  if (r.runs.length === 0) {
    ctx.stdout("No runs yet: start one with `dvergr run ROOM/NAME --candidate SPEC`\n");
    return 0;
  }
  for (const x of r.runs) {
    ctx.stdout(
      `${x.id}  ${x.room}/${x.bundle}  ${x.candidate}  ${x.status}${
        x.outcome ? ` ${x.outcome}` : ""
      }` +
        `  ${x.branch ? `${x.branch} (${x.changed} changed)` : "no fork"}` +
        `${x.review ? `  review ${x.review}` : ""}\n`,
    );
  }
  return 0;
}
