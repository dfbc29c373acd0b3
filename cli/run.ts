import { parseCommandArgs } from "./args.ts";
import { parseRoomName } from "./bundle_arg.ts";
import type { CliContext } from "./context.ts";
import { DEPLOY_HOME_HELP, withDeployOp } from "./home_arg.ts";
import { printJson } from "./render.ts";
import { paramTexts } from "./run_params.ts";
import { usageError } from "../core/errors.ts";
import { CATALOG_RUN_FORMAT, outcomeView, runAndReview } from "../core/ops/deploy_runs.ts";

export const HELP = `dvergr run ROOM/NAME --candidate SPEC [--param K=V]… [--home DIR] [--json]

Runs bundle workflows/NAME/ of room ROOM once, for real: the candidate gets the bundle's task
in a world made from the room's current files (everything but workflows/), in the same
sandbox, limits and gateway as a benchmark attempt, and the checker grades what it left
without gold. The world's changes under the bundle's capture directories are kept as the
branch runs/<run id> of the room's git repository, on the commit the run started from.

The bundle's :review then decides: the checks (no conflict with the room's head, the declared
paths, the number of files, the checker's reward), the reviewer model, the spot check; the
fork is merged, proposed or escalated for a person (dvergr review), or discarded. A bundle
without :review proposes it to a person (after the check that it does not conflict).

Exit status: 0 merged, proposed or unchanged; 1 escalated or discarded, or the
attempt did not complete; 2 bad input.

Options:
  --candidate SPEC  who does the work: builtin:reference, NAME=cmd:COMMAND, cmd:NAME,
                    NAME=agent:claude-code:MODEL, a model id
  --param K=V       a task/checker parameter (repeatable)
${DEPLOY_HOME_HELP}
  --json            print the run and its review as JSON
  -h, --help        show this help

Example:
  dvergr run wiki/keeper --candidate builtin:reference
`;

export const OPTIONS = {
  candidate: { type: "string" },
  param: { type: "string", multiple: true },
  home: { type: "string" },
  store: { type: "string" },
  blobs: { type: "string" },
  json: { type: "boolean" },
} as const;

/** Reads the command line: ROOM/NAME, the candidate and the parameters; nothing touched. */
export function parse(args: string[]) {
  const { values, positionals } = parseCommandArgs("run", args, OPTIONS);
  const ref = positionals.length === 1 ? parseRoomName(positionals[0]) : null;
  if (!ref) {
    throw usageError(
      `"dvergr run" takes one ROOM/NAME${
        positionals.length ? `, got ${positionals.map((p) => JSON.stringify(p)).join(" ")}` : ""
      }`,
      "Name a bundle in a room, e.g. `dvergr run wiki/keeper --candidate builtin:reference`",
    );
  }
  if (!values.candidate) {
    throw usageError(
      '"dvergr run" needs --candidate SPEC',
      "For example --candidate builtin:reference",
    );
  }
  return {
    ...ref,
    candidate: values.candidate,
    params: paramTexts(values.param ?? [], "run"),
    home: values.home,
    store: values.store,
    blobs: values.blobs,
    json: values.json === true,
  };
}

export async function run(ctx: CliContext, opts: ReturnType<typeof parse>): Promise<number> {
  const outcome = await withDeployOp(
    ctx,
    opts,
    (op) => runAndReview(op, opts),
  );
  const view = outcomeView(outcome);
  const failed = view.outcome !== "completed" || view.decision === "escalated" ||
    view.decision === "discarded";
  if (opts.json) {
    printJson(ctx, CATALOG_RUN_FORMAT, { ...view, review: outcome.review });
    return failed ? 1 : 0;
  }
  const out = (s: string) => ctx.stdout(s + "\n");
  out(
    `run ${view.run}: ${view.room}/${view.bundle}, ${view.outcome ?? view.status}` +
      (view.reward === null ? "" : `, reward ${view.reward}`),
  );
  if (view.branch) {
    out(
      `  fork ${view.branch}: ${view.changed.length} path${
        view.changed.length === 1 ? "" : "s"
      } changed`,
    );
  }
  for (const c of outcome.review?.checks ?? []) {
    out(`  ${c.ok ? "ok  " : "FAIL"} ${c.check}: ${c.evidence}`);
  }
  const r = outcome.review?.reviewer;
  if (r) {
    out(`  reviewer ${r.model}: ${r.verdict ?? "no verdict"}${r.problem ? ` (${r.problem})` : ""}`);
  }
  out(`${view.decision}: ${view.why}`);
  if (view.decision === "proposed" || view.decision === "escalated") {
    out(`  decide with: dvergr review approve ${view.run}   (or discard)`);
  }
  return failed ? 1 : 0;
}
