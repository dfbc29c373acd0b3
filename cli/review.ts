import { parseCommandArgs } from "./args.ts";
import type { CliContext } from "./context.ts";
import { DEPLOY_HOME_HELP, withDeployOp } from "./home_arg.ts";
import { printJson } from "./render.ts";
import { usageError } from "../core/errors.ts";
import { callOp } from "../core/ops/registry.ts";
import { reviewDecide, reviewList, reviewShow } from "../core/ops/deploy_runs.ts";

export const HELP =
  `dvergr review list [--decision D] | show ID | approve ID | discard ID [--home DIR] [--json]

The reviews of production runs (dvergr run, schedules): each the checks with their evidence,
the reviewer's verdict, the spot check and the decision (merged, proposed, escalated,
discarded). A person decides what was proposed or escalated: approve merges the run's fork
into the room, but only while the room is still at the state that was reviewed (else it stays
escalated: run the bundle again); discard drops it. A decision is recorded once.

Exit status: 0 done; 1 approve could not merge (the room changed: escalated); 2 bad input
(no such review, decided already).

Options:
  --decision D    list: only merged, proposed, escalated or discarded reviews
${DEPLOY_HOME_HELP}
  --json          print as JSON
  -h, --help      show this help

Example:
  dvergr review list --decision escalated
`;

export const OPTIONS = {
  decision: { type: "string" },
  home: { type: "string" },
  store: { type: "string" },
  blobs: { type: "string" },
  json: { type: "boolean" },
} as const;

const ACTIONS = ["list", "show", "approve", "discard"] as const;
const DECISIONS = ["merged", "proposed", "escalated", "discarded"] as const;

export function parse(args: string[]) {
  const { values, positionals } = parseCommandArgs("review", args, OPTIONS);
  const [action, id, ...rest] = positionals;
  if (!(ACTIONS as readonly string[]).includes(action ?? "")) {
    throw usageError(
      `"dvergr review" needs one of ${ACTIONS.join(", ")}${action ? `, got "${action}"` : ""}`,
      "Run `dvergr review list`, then `dvergr review show ID`",
    );
  }
  if ((action === "list") !== (id === undefined) || rest.length > 0) {
    throw usageError(
      action === "list"
        ? '"dvergr review list" takes no ID'
        : `"dvergr review ${action}" takes one ID`,
      "Review ids are listed by `dvergr review list`",
    );
  }
  const decision = values.decision;
  if (decision !== undefined && !(DECISIONS as readonly string[]).includes(decision)) {
    throw usageError(
      `Cannot list reviews by decision "${decision}"`,
      `Use one of ${DECISIONS.join(", ")}`,
    );
  }
  return {
    action: action as typeof ACTIONS[number],
    id,
    decision: decision as typeof DECISIONS[number] | undefined,
    home: values.home,
    store: values.store,
    blobs: values.blobs,
    json: values.json === true,
  };
}

export async function run(ctx: CliContext, opts: ReturnType<typeof parse>): Promise<number> {
  const out = (s: string) => ctx.stdout(s + "\n");
  return await withDeployOp(ctx, opts, async (op) => {
    if (opts.action === "list") {
      const r = await callOp(reviewList, op, opts.decision ? { decision: opts.decision } : {});
      if (opts.json) printJson(ctx, reviewList.output, r);
      else if (r.reviews.length === 0) out("No reviews");
      else {for (const v of r.reviews) {
          out(`${v.id}  ${v.room}/${v.bundle}  ${v.decision}  ${v.why}`);
        }}
      return 0;
    }
    if (opts.action === "show") {
      const v = await callOp(reviewShow, op, { id: opts.id! });
      if (opts.json) {
        printJson(ctx, reviewShow.output, v);
        return 0;
      }
      out(
        `review ${v.id}: ${v.room}/${v.bundle}  ${v.final}${
          v.person ? ` (by a person; the review said ${v.decision})` : ""
        }`,
      );
      out(`  world ${v.world} (branch runs/${v.run}), base ${v.base}, state reviewed ${v.state}`);
      out(`  review spec ${v.spec}`);
      for (const c of v.checks) out(`  ${c.ok ? "ok  " : "FAIL"} ${c.check}: ${c.evidence}`);
      if (v.reviewer) {
        out(
          `  reviewer ${v.reviewer.model}: ${v.reviewer.verdict ?? "no verdict"}${
            v.reviewer.problem ? ` (${v.reviewer.problem})` : ""
          }`,
        );
        for (const r of v.reviewer.reasons) out(`    reason: ${r}`);
        for (const c of v.reviewer.concerns) out(`    concern: ${c}`);
      }
      if (v.spotCheck) {
        out(
          `  spot check: ${v.spotCheck.value.toFixed(4)} < ${v.spotCheck.rate}? ${
            v.spotCheck.sampled ? "sampled" : "no"
          }`,
        );
      }
      out(`  ${v.person?.why ?? v.why}`);
      return 0;
    }
    const r = await callOp(reviewDecide, op, {
      id: opts.id!,
      decision: opts.action === "approve" ? "approve" : "discard",
    });
    if (opts.json) printJson(ctx, reviewDecide.output, r);
    else out(`${r.decision}: ${r.why}`);
    return opts.action === "approve" && r.decision !== "merged" ? 1 : 0;
  });
}
