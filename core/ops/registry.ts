/**
 * The registry of every op. Modules define their ops (core/ops/<area>.ts) and are listed
 * here once; the CLI and the MCP server find them by name or toolset.
 */
import { DvergrError } from "../errors.ts";
import type { AnyZodObject, Op, OpContext } from "./op.ts";
import type { FormatValue, JsonFormat } from "../json_format.ts";
import { ROOM_OPS } from "./rooms.ts";
import { ROOM_FORK_OPS } from "./room_forks.ts";
import { CATALOG_BUNDLE_OPS } from "./catalog_bundles.ts";
import { CATALOG_RUN_OPS } from "./catalog_run.ts";
import { CATALOG_FREEZE_OPS } from "./catalog_freeze.ts";
import { JOB_OPS } from "./jobs.ts";
import { SCORECARD_OPS } from "./scorecards.ts";
import { ATTEMPT_OPS } from "./attempts.ts";
import { GRADING_OPS } from "./grading.ts";
import { DEPLOY_RUN_OPS } from "./deploy_runs.ts";
import { DEPLOY_SCHEDULE_OPS } from "./deploy_schedules.ts";

// Each area's ops, in the order tools are listed. An area module exports a list of ops
// and is imported here; its handlers import heavy modules lazily.
const AREAS: Op[][] = [
  ROOM_OPS,
  ROOM_FORK_OPS,
  CATALOG_BUNDLE_OPS,
  CATALOG_RUN_OPS,
  CATALOG_FREEZE_OPS,
  JOB_OPS,
  SCORECARD_OPS,
  ATTEMPT_OPS,
  GRADING_OPS,
  DEPLOY_RUN_OPS,
  DEPLOY_SCHEDULE_OPS,
];

/** Every registered op. */
export function allOps(): Op[] {
  return AREAS.flat();
}

/** The op of a tool name, or a NOT_FOUND error listing the known ones. */
export function findOp(name: string): Op {
  const op = allOps().find((o) => o.name === name);
  if (!op) {
    throw new DvergrError("NOT_FOUND", `No operation "${name}"`, {
      hint: `Known operations: ${allOps().map((o) => o.name).join(", ")}`,
    });
  }
  return op;
}

/**
 * Validates raw input against the op's schema and runs it. Invalid input is a USAGE
 * error naming each field at fault.
 */
export async function callOp<I extends AnyZodObject, F extends JsonFormat>(
  op: Op<I, F>,
  ctx: OpContext,
  raw: unknown,
): Promise<FormatValue<F>> {
  const parsed = op.input.safeParse(raw ?? {});
  if (!parsed.success) {
    const fields = parsed.error.issues.map((i) => {
      const at = i.path.length ? i.path.join(".") : "input";
      return i.code === "unrecognized_keys"
        ? `unknown parameter${i.keys.length > 1 ? "s" : ""} ${i.keys.join(", ")}`
        : `${at}: ${i.message}`;
    });
    throw new DvergrError("USAGE", `Cannot call ${op.name}: ${fields.join("; ")}`, {
      hint: `${op.name} takes ${Object.keys(op.input.shape).join(", ") || "no parameters"}`,
      details: { op: op.name, issues: parsed.error.issues },
    });
  }
  return await op.handler(ctx, parsed.data);
}
