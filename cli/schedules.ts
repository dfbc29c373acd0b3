import { parseCommandArgs } from "./args.ts";
import type { CliContext } from "./context.ts";
import { DEPLOY_HOME_HELP, withDeployOp } from "./home_arg.ts";
import { printJson } from "./render.ts";
import { usageError } from "../core/errors.ts";
import { callOp } from "../core/ops/registry.ts";
import { scheduleCancel, scheduleList } from "../core/ops/deploy_schedules.ts";

export const HELP = `dvergr schedules [--json] | schedules cancel ID [--home DIR]

Lists the home's schedules (dvergr deploy) with their interval, next run and last run, or
cancels one: no further runs start (one in progress finishes).

Exit status: 0 done; 2 bad input (no such schedule).

Options:
${DEPLOY_HOME_HELP}
  --json          print as JSON
  -h, --help      show this help

Example:
  dvergr schedules
`;

export const OPTIONS = {
  home: { type: "string" },
  store: { type: "string" },
  blobs: { type: "string" },
  json: { type: "boolean" },
} as const;

export function parse(args: string[]) {
  const { values, positionals } = parseCommandArgs("schedules", args, OPTIONS);
  const [action, id, ...rest] = positionals;
  const cancel = action === "cancel";
  if ((action !== undefined && !cancel) || (cancel && (id === undefined || rest.length > 0))) {
    throw usageError(
      `"dvergr schedules" takes nothing, or cancel ID`,
      "Run `dvergr schedules` to list them, `dvergr schedules cancel ID` to stop one",
    );
  }
  return {
    cancel: cancel ? id : undefined,
    home: values.home,
    store: values.store,
    blobs: values.blobs,
    json: values.json === true,
  };
}

export async function run(ctx: CliContext, opts: ReturnType<typeof parse>): Promise<number> {
  return await withDeployOp(ctx, opts, async (op) => {
    if (opts.cancel !== undefined) {
      const r = await callOp(scheduleCancel, op, { id: opts.cancel });
      if (opts.json) printJson(ctx, scheduleCancel.output, r);
      else ctx.stdout(`schedule ${r.id} ${r.cancelled ? "cancelled" : "was cancelled already"}\n`);
      return 0;
    }
    const r = await callOp(scheduleList, op, {});
    if (opts.json) printJson(ctx, scheduleList.output, r);
    else if (r.schedules.length === 0) {
      ctx.stdout(
        "No schedules: store one with `dvergr deploy ROOM/NAME --candidate SPEC --every 1d`\n",
      );
    } else {
      for (const s of r.schedules) {
        ctx.stdout(
          `${s.id}  ${s.room}/${s.bundle}  ${s.candidate}  every ${s.every}${
            s.at ? ` at ${s.at}` : ""
          }  ` +
            (s.cancelledAt ? `cancelled ${s.cancelledAt}` : `next ${s.nextRun}`) +
            `${s.lastRun ? `  last run ${s.lastRun}` : ""}\n`,
        );
      }
    }
    return 0;
  });
}
