/**
 * One attempt of an experiment in full (MCP `attempt_export`, `dvergr show`): its outcome,
 * verdict and checks, captured files, the candidate's output tail or model transcript,
 * fetched pages, cost and times; and the cells of an experiment with their outcomes.
 */
import { z } from "zod";
import { DvergrError } from "../errors.ts";
import type { ExperimentDefinition } from "../bench/experiment.ts";
import { cellKey } from "../bench/records.ts";
import { type AttemptView, attemptView } from "../bench/attempt_view.ts";
import { causeOf, type Outcome, outcomeOf } from "../bench/outcome.ts";
import { getJson } from "../ports/blob_store.ts";
import type { Home } from "../ports/home.ts";
import type { ExperimentMeta } from "../ports/state_store.ts";
import { defineOp, type Op } from "./op.ts";
import { defineFormat, fields, typed } from "../json_format.ts";
import { findExperiment } from "./scorecards.ts";

/** Where an attempt is: its candidate, case (null without cases) and repetition. */
export interface CellRef {
  candidate: string;
  caseId: string | null;
  repetition: number;
}

function definitionOf(meta: ExperimentMeta): ExperimentDefinition {
  return meta.definition as unknown as ExperimentDefinition;
}

/**
 * Checks a cell reference against the experiment's definition; a USAGE error names the
 * candidates, cases or repetitions it has.
 */
export function checkCell(meta: ExperimentMeta, ref: CellRef): CellRef {
  const def = definitionOf(meta);
  const names = def.candidates.map((c) => c.name);
  if (!names.includes(ref.candidate)) {
    throw new DvergrError(
      "USAGE",
      `Experiment ${meta.id} has no candidate "${ref.candidate}"`,
      { hint: `Its candidates: ${names.map((n) => `"${n}"`).join(", ")}` },
    );
  }
  if (def.cases === null) {
    if (ref.caseId !== null) {
      throw new DvergrError(
        "USAGE",
        `Experiment ${meta.id} has no cases (its bundle is one environment)`,
        { hint: "Leave out the case" },
      );
    }
  } else if (ref.caseId === null || !def.cases.includes(ref.caseId)) {
    throw new DvergrError(
      "USAGE",
      ref.caseId === null
        ? `Which case of experiment ${meta.id}? It ran ${def.cases.length}`
        : `Experiment ${meta.id} did not run case "${ref.caseId}"`,
      { hint: `Its cases include: ${def.cases.slice(0, 10).join(", ")}` },
    );
  }
  if (
    !Number.isInteger(ref.repetition) || ref.repetition < 0 || ref.repetition >= def.repetitions
  ) {
    throw new DvergrError(
      "USAGE",
      `Experiment ${meta.id} has no repetition ${ref.repetition}`,
      { hint: `Repetitions are numbered from 0 to ${def.repetitions - 1}` },
    );
  }
  return ref;
}

/** The attempt of a cell in full, from its latest record and its evidence. */
export async function loadAttempt(
  home: Home,
  meta: ExperimentMeta,
  ref: CellRef,
): Promise<AttemptView> {
  checkCell(meta, ref);
  const record = await home.state.cellRecord(
    meta.id,
    cellKey(ref.candidate, ref.caseId, ref.repetition),
  );
  if (!record) {
    throw new DvergrError(
      "NOT_FOUND",
      `The cell ${ref.candidate}${
        ref.caseId === null ? "" : ` / ${ref.caseId}`
      } / ${ref.repetition} of experiment ${meta.id} has not run yet`,
      { hint: "Run the benchmark again to resume it" },
    );
  }
  const evidence = record.evidenceRef ? await getJson(home.blobs, record.evidenceRef) : null;
  const web = (evidence as { web?: { pagesRef?: unknown } } | null)?.web;
  const pagesRef = typeof web?.pagesRef === "string" ? web.pagesRef : null;
  const pages = pagesRef ? await getJson(home.blobs, pagesRef) : null;
  return attemptView(record, evidence, pages);
}

/** A cell of an experiment and how its latest try ended. */
export interface CellSummary {
  candidate: string;
  case: string | null;
  repetition: number;
  /** null: not run yet. */
  outcome: Outcome | null;
  reward: number | null;
  cause: string | null;
  tryNo: number | null;
  elapsedMs: number | null;
}

/** Every planned cell of an experiment, in plan order, with its latest record's outcome. */
export async function experimentCells(home: Home, meta: ExperimentMeta): Promise<CellSummary[]> {
  const def = definitionOf(meta);
  // What a cell shows of its latest record, kept instead of the record (they stream past).
  type Seen = Omit<CellSummary, "candidate" | "case" | "repetition">;
  const latest = new Map<string, Seen>();
  for await (const r of home.state.streamCellRecords(meta.id)) {
    latest.set(cellKey(r.candidate, r.caseId, r.repetition), {
      outcome: outcomeOf(r),
      reward: r.verdict?.reward ?? null,
      cause: causeOf(r)?.[1] ?? null,
      tryNo: r.tryNo,
      elapsedMs: r.elapsedMs,
    });
  }
  const out: CellSummary[] = [];
  for (let repetition = 0; repetition < def.repetitions; repetition++) {
    for (const caseId of def.cases ?? [null]) {
      for (const { name } of def.candidates) {
        const r = latest.get(cellKey(name, caseId, repetition));
        out.push({
          candidate: name,
          case: caseId,
          repetition,
          outcome: r?.outcome ?? null,
          reward: r?.reward ?? null,
          cause: r?.cause ?? null,
          tryNo: r?.tryNo ?? null,
          elapsedMs: r?.elapsedMs ?? null,
        });
      }
    }
  }
  return out;
}

/** The fields of an attempt in full (attempt_export, `dvergr show` of one cell). */
export const attemptFields = {
  experiment: fields.experiment,
  candidate: z.string(),
  case: z.string().nullable(),
  repetition: z.number().int(),
  tryNo: z.number().int(),
  outcome: z.enum(["passed", "failed", "crashed", "timed-out", "budget", "fault"]),
  cause: z.string().nullable().describe("Why it did not pass, one line; null when it passed"),
  status: z.string(),
  startedAt: fields.time,
  elapsedMs: z.number(),
  verdict: z.object({ reward: z.number(), checks: z.record(z.string(), z.boolean()) }).nullable(),
  fault: z.object({ source: z.string(), kind: z.string(), message: z.string() }).nullable(),
  failure: z.object({ kind: z.string(), message: z.string() }).nullable(),
  process: typed<AttemptView["process"]>(z.looseObject({}).nullable()),
  model: typed<AttemptView["model"]>(z.looseObject({}).nullable()),
};

const ATTEMPT_FORMAT = defineFormat(
  "attempt",
  1,
  "One attempt in full: outcome and cause, verdict, files, process or transcript, gateway, web, cost (attempt_export).",
  z.looseObject({ room: fields.room, ...attemptFields }),
);

export const attemptExport = defineOp({
  name: "attempt_export",
  title: "One attempt in full",
  description: "One attempt of an experiment in full: its outcome (passed, failed, crashed, " +
    "timed-out, budget, fault) and cause, the verdict and every check, the files it left " +
    "under :capture, a command's exit status and stdout/stderr tail or a model's transcript " +
    "and tool calls, fetched pages, cost, tokens and times. experiment_progress and " +
    "experiment_report say which attempts went wrong.",
  kind: "read",
  toolset: "bench",
  roomScoped: true,
  input: z.strictObject({
    room: z.string().min(1).describe("The room (its slug)"),
    experiment: z.string().min(4).max(64).describe(
      "The experiment id (or a unique prefix of it)",
    ),
    candidate: z.string().min(1).describe("The candidate's name, as the scorecard lists it"),
    case: z.string().min(1).optional().describe(
      "The case id (leave out for a bundle without cases)",
    ),
    repetition: z.number().int().min(0).optional().describe("The repetition, from 0 (default 0)"),
  }),
  output: ATTEMPT_FORMAT,
  async handler(ctx, input) {
    const meta = await findExperiment(ctx, input.room, input.experiment);
    return {
      room: input.room,
      ...(await loadAttempt(ctx.home, meta, {
        candidate: input.candidate,
        caseId: input.case ?? null,
        repetition: input.repetition ?? 0,
      })),
    };
  },
});

/** The attempt ops, in the order tools are listed. */
export const ATTEMPT_OPS: Op[] = [attemptExport];
