import { parseCommandArgs } from "./args.ts";
import type { CliContext } from "./context.ts";
import { DEPLOY_HOME_HELP, withDeployOp } from "./home_arg.ts";
import { printJson } from "./render.ts";
import { usageError } from "../core/errors.ts";
import { TICK_FORMAT, tickSchedules, tickText } from "../core/ops/deploy_schedules.ts";

export const HELP = `dvergr tick [--now ISO-TIME] [--home DIR] [--json]

Starts the runs of the home's schedules (dvergr deploy) that are due now, or at --now, each
run to its review, and exits: for cron or a systemd timer (and for tests). Only the latest
slot of a schedule that has come runs, once: a schedule missed for a week runs once, and a
slot another process started is left to it.

Exit status: 0 done (also when nothing was due); 1 a due run could not start (its bundle
gone, a bad candidate); 2 bad input.

Options:
  --now ISO-TIME  the moment to tick at, e.g. 2026-03-01T06:30:00Z (default: now)
${DEPLOY_HOME_HELP}
  --json          print what started as JSON
  -h, --help      show this help

Example:
  dvergr tick --now 2026-03-01T06:30:00Z
`;

export const OPTIONS = {
  now: { type: "string" },
  home: { type: "string" },
  store: { type: "string" },
  blobs: { type: "string" },
  json: { type: "boolean" },
} as const;

export function parse(args: string[]) {
  const { values, positionals } = parseCommandArgs("tick", args, OPTIONS);
  if (positionals.length > 0) {
    throw usageError('"dvergr tick" takes no arguments', "Run `dvergr tick`");
  }
  let now: Date | undefined;
  if (values.now !== undefined) {
    now = new Date(values.now);
    if (!/^\d{4}-\d\d-\d\dT/.test(values.now) || Number.isNaN(now.getTime())) {
      throw usageError(
        `Cannot tick at "${values.now}": not an ISO time`,
        "For example --now 2026-03-01T06:30:00Z",
      );
    }
  }
  return {
    now,
    home: values.home,
    store: values.store,
    blobs: values.blobs,
    json: values.json === true,
  };
}

export async function run(ctx: CliContext, opts: ReturnType<typeof parse>): Promise<number> {
  const results = await withDeployOp(
    ctx,
    opts,
    (op) => tickSchedules(op, opts.now ?? op.clock()),
  );
  if (opts.json) printJson(ctx, TICK_FORMAT, { ticks: results });
  else {
    if (results.length === 0) ctx.stdout("Nothing due\n");
    for (const r of results) {
      ctx.stdout(tickText(r) + "\n");
    }
  }
  return results.some((r) => r.error) ? 1 : 0;
}
