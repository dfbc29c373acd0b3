import { parseCommandArgs } from "./args.ts";
import type { CliContext } from "./context.ts";
import { CELLS_FORMAT, SHOW_ATTEMPT_FORMAT } from "./json_formats.ts";
import { printJson } from "./render.ts";
import { usageError } from "../core/errors.ts";
import type { Home } from "../core/ports/home.ts";
import { EXPERIMENT_HOME_HELP, withExperiment } from "./experiment_homes.ts";
import type { ExperimentMeta } from "../core/ports/state_store.ts";
import type { WorkerProgress } from "../core/ports/experiment_queue.ts";
import { type CellRef, experimentCells, loadAttempt } from "../core/ops/attempts.ts";
import { attemptText } from "../core/bench/attempt_view.ts";
import { OUTCOME_TEXT } from "../core/bench/outcome.ts";
import { formatFixed } from "../core/bench/format_fixed.ts";

export const HELP =
  `dvergr show <experiment>[/<candidate>/<case>/<repetition>] [--home DIR] [--json]

Shows an experiment's cells (candidate, case, repetition, outcome, reward, cause), and on a
store shared by workers (--store) its progress by worker (cells recorded, running now, when
each worker was last seen); or one
attempt in full: its outcome and verdict with every check, the files it left, a command's
exit status and the tail of its stdout and stderr, its MCP calls and model requests through
the world gateway (and an agent CLI's own result), a model's transcript and tool calls,
fetched pages, cost and times.

The experiment is its id or a unique prefix (the benchmark prints it: "Experiment …").
A bundle without cases has no case: <experiment>/<candidate>/<repetition>. Repetitions
count from 0; a missing one is 0.

Options:
${EXPERIMENT_HOME_HELP}
  --json      print the cells, or the attempt, as JSON
  -h, --help  show this help

Examples:
  dvergr show 0578d195
  dvergr show 0578d195/naive/inv-001/0 --json
  dvergr show 0578d195 --store postgres://dvergr@db.internal:5432/dvergr

Exit status: 0 shown; 2 bad input (no such experiment, candidate, case or repetition).
`;

export const OPTIONS = {
  home: { type: "string" },
  store: { type: "string" },
  blobs: { type: "string" },
  json: { type: "boolean" },
} as const;

/** Splits `exp/candidate/case/repetition` (a candidate name may itself hold slashes). */
function parseTarget(target: string, hasCases: boolean): CellRef {
  const parts = target.split("/").slice(1);
  const rep = (s: string | undefined): number => {
    if (s === undefined) return 0;
    if (!/^\d+$/.test(s)) {
      throw usageError(
        `Cannot show "${target}": repetition "${s}" is not a number`,
        "Write <experiment>/<candidate>/<case>/<repetition>, e.g. 3f2a/mine/c1/0",
      );
    }
    return Number(s);
  };
  if (!hasCases) {
    const last = parts[parts.length - 1];
    const numbered = parts.length >= 2 && /^\d+$/.test(last);
    return {
      candidate: (numbered ? parts.slice(0, -1) : parts).join("/"),
      caseId: null,
      repetition: numbered ? Number(last) : 0,
    };
  }
  if (parts.length < 2) {
    throw usageError(
      `Cannot show "${target}": name the case too`,
      "Write <experiment>/<candidate>/<case>/<repetition>, e.g. 3f2a/mine/c1/0",
    );
  }
  const last = parts[parts.length - 1];
  if (parts.length >= 3 && /^\d+$/.test(last)) {
    return {
      candidate: parts.slice(0, -2).join("/"),
      caseId: parts[parts.length - 2],
      repetition: rep(last),
    };
  }
  return { candidate: parts.slice(0, -1).join("/"), caseId: last, repetition: 0 };
}

/** Reads the command line: flags and arguments checked, nothing touched. */
export function parse(args: string[]) {
  const { values, positionals } = parseCommandArgs("show", args, OPTIONS);
  if (positionals.length !== 1) {
    throw usageError(
      `"dvergr show" takes one experiment or attempt, got ${positionals.length}`,
      "Write dvergr show <experiment>[/<candidate>/<case>/<repetition>]",
    );
  }
  return { values, positionals };
}

export async function run(ctx: CliContext, opts: ReturnType<typeof parse>): Promise<number> {
  const { values, positionals } = opts;
  const target = positionals[0];
  return await withExperiment(
    ctx,
    values,
    target.split("/")[0],
    "show",
    (home, meta) => show(ctx, home, meta, target, values.json === true),
  );
}

/** Progress by worker: one line each, after a line of the whole. */
export function workerLines(workers: WorkerProgress[], recorded: number): string[] {
  const flying = workers.reduce((n, w) => n + w.inFlight, 0);
  const lines = [`${recorded} cells recorded, ${flying} running now, by ${workers.length} runs:`];
  for (const w of workers) {
    const who = w.host === null
      ? `${w.owner.slice(0, 8)} (a benchmark's own run)`
      : `worker ${w.owner.slice(0, 8)} on ${w.host} pid ${w.pid}`;
    const seen = w.seenSecondsAgo === null ? "" : `; ${w.state}, seen ${w.seenSecondsAgo} s ago`;
    lines.push(`  ${who}: ${w.records} recorded, ${w.inFlight} running${seen}`);
  }
  return lines;
}

async function show(
  ctx: CliContext,
  home: Home,
  meta: ExperimentMeta,
  target: string,
  json: boolean,
): Promise<number> {
  const out = (s: string) => ctx.stdout(s + "\n");
  const cases = (meta.definition as { cases?: unknown }).cases;
  if (target.includes("/")) {
    const view = await loadAttempt(home, meta, parseTarget(target, Array.isArray(cases)));
    if (json) printJson(ctx, SHOW_ATTEMPT_FORMAT, { home: home.dir, room: meta.room, ...view });
    else ctx.stdout(attemptText(view));
    return 0;
  }
  const cells = await experimentCells(home, meta);
  // On a store shared by workers: who ran what, and who holds cells now.
  const workers = home.queue ? await home.queue.progress(meta.id) : null;
  if (json) {
    printJson(ctx, CELLS_FORMAT, {
      home: home.where ?? home.dir,
      room: meta.room,
      experiment: meta.id,
      bundle: meta.bundleName,
      createdAt: meta.createdAt,
      cells,
      ...(workers ? { workers } : {}),
    });
    return 0;
  }
  out(
    `Experiment ${meta.id}: bundle ${meta.bundleName} in room ${meta.room}, ${cells.length} cells`,
  );
  if (workers) workerLines(workers, cells.filter((c) => c.outcome !== null).length).forEach(out);
  const w = Math.max(9, ...cells.map((c) => c.candidate.length));
  const cw = Math.max(4, ...cells.map((c) => (c.case ?? "-").length));
  out(
    `${"candidate".padEnd(w)}  ${"case".padEnd(cw)}  rep  ${"outcome".padEnd(17)}  reward  cause`,
  );
  for (const c of cells) {
    out(
      `${c.candidate.padEnd(w)}  ${(c.case ?? "-").padEnd(cw)}  ${
        String(c.repetition).padStart(3)
      }  ${(c.outcome ? OUTCOME_TEXT[c.outcome] : "not run").padEnd(17)}  ${
        c.reward === null ? "     –" : formatFixed(c.reward, 3).padStart(6)
      }  ${c.cause ?? ""}`
        .trimEnd(),
    );
  }
  const first = cells.find((c) => c.outcome !== null && c.outcome !== "passed");
  if (first) {
    out(
      `One attempt in full: dvergr show ${meta.id.slice(0, 8)}/${first.candidate}/${
        first.case === null ? "" : `${first.case}/`
      }${first.repetition}`,
    );
  }
  return 0;
}
