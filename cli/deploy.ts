import { parseCommandArgs } from "./args.ts";
import { parseRoomName } from "./bundle_arg.ts";
import type { CliContext } from "./context.ts";
import { DEPLOY_HOME_HELP, withDeployOp } from "./home_arg.ts";
import { printJson } from "./render.ts";
import { paramTexts } from "./run_params.ts";
import { usageError } from "../core/errors.ts";
import { createSchedule, SCHEDULE_FORMAT, scheduleRow } from "../core/ops/deploy_schedules.ts";

export const HELP = `dvergr deploy ROOM/NAME --candidate SPEC --every DURATION [--at HH:MM]
              [--param K=V]… [--home DIR] [--json]

Stores a schedule in the home: bundle workflows/NAME/ of room ROOM is run by the candidate
every DURATION (30m, 1h, 1d, 7d…; at least 1m), as \`dvergr run\` runs it, each run's fork
reviewed under the bundle's :review. Without --at the first run is due at once; with it, at
the next HH:MM (UTC). \`dvergr serve\` starts due runs while it runs; \`dvergr tick\` (from cron
or a systemd timer) starts those due when it is called. A schedule missed for a while runs
once, not once per missed interval; two processes on one home start each run once.
Schedules survive restarts; \`dvergr schedules\` lists them, \`dvergr schedules cancel ID\`
stops one.

Exit status: 0 stored; 2 bad input (no such bundle, a bad interval or time).

Options:
  --candidate SPEC  who does the work (as dvergr run takes it)
  --every DURATION  the interval: a number and m, h, d or w
  --at HH:MM        the time of day (UTC) of the runs
  --param K=V       a task/checker parameter (repeatable)
${DEPLOY_HOME_HELP}
  --json            print the schedule as JSON
  -h, --help        show this help

Example:
  dvergr deploy wiki/wiki-keeper --candidate builtin:reference --every 7d --at 06:30
`;

export const OPTIONS = {
  candidate: { type: "string" },
  every: { type: "string" },
  at: { type: "string" },
  param: { type: "string", multiple: true },
  home: { type: "string" },
  store: { type: "string" },
  blobs: { type: "string" },
  json: { type: "boolean" },
} as const;

export function parse(args: string[]) {
  const { values, positionals } = parseCommandArgs("deploy", args, OPTIONS);
  const ref = positionals.length === 1 ? parseRoomName(positionals[0]) : null;
  if (!ref) {
    throw usageError(
      `"dvergr deploy" takes one ROOM/NAME`,
      "For example `dvergr deploy wiki/wiki-keeper --candidate builtin:reference --every 1d`",
    );
  }
  if (!values.candidate || !values.every) {
    throw usageError(
      `"dvergr deploy" needs --candidate SPEC and --every DURATION`,
      "For example --candidate builtin:reference --every 1d",
    );
  }
  return {
    ...ref,
    candidate: values.candidate,
    every: values.every,
    at: values.at,
    params: paramTexts(values.param ?? [], "deploy"),
    home: values.home,
    store: values.store,
    blobs: values.blobs,
    json: values.json === true,
  };
}

export async function run(ctx: CliContext, opts: ReturnType<typeof parse>): Promise<number> {
  const row = await withDeployOp(
    ctx,
    opts,
    async (op) => scheduleRow(await createSchedule(op, opts), op.clock().getTime()),
  );
  if (opts.json) printJson(ctx, SCHEDULE_FORMAT, row);
  else {
    ctx.stdout(
      `schedule ${row.id}: ${row.room}/${row.bundle} by ${row.candidate} every ${row.every}` +
        `${row.at ? ` at ${row.at} UTC` : ""}; next run ${row.nextRun}\n` +
        "  due runs start under `dvergr serve`, or at each `dvergr tick`\n",
    );
  }
  return 0;
}
