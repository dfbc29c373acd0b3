/**
 * The JSON formats of the commands that have no op of their own (core/json_format.ts):
 * what `dvergr benchmark|demo|export|cases|experiments|init|show|store --json` print. The
 * commands that call an op print the op's format (core/ops/). `allFormats()` lists every
 * format, for schemas/ and the tests.
 */
import { z } from "zod";
import { defineFormat, ERROR_FORMAT, fields, type JsonFormat, typed } from "../core/json_format.ts";
import { scorecardShape } from "../core/ops/formats.ts";
import { EXCLUSION_REASON } from "../core/ops/catalog_run.ts";
import { DESCRIBE_FORMAT, JS_EVAL_FORMAT } from "../mcp/code_profile.ts";
import { exportFields } from "../core/ops/catalog_bundles.ts";
import { attemptFields } from "../core/ops/attempts.ts";
import { allOps } from "../core/ops/registry.ts";
import { regradeComparisonShape } from "../core/ops/grading.ts";
import { TICK_FORMAT } from "../core/ops/deploy_schedules.ts";
import type { Diagnosis } from "../core/bench/diagnosis.ts";
import type { CellSummary } from "../core/ops/attempts.ts";

/** The diagnosis of an experiment, as benchmark's --json carries it. */
const diagnosisFields = {
  cases: z.number().int().describe("Cases the experiment ran (0: a bundle without cases)"),
  caseIds: z.array(z.string()).nullable().describe("Their ids; null for a bundle without cases"),
  bundleCases: z.number().int().describe("Cases the bundle has"),
  failureCauses: typed<Record<string, Diagnosis["candidates"][number]["causes"]>>(
    z.record(
      z.string(),
      z.array(z.looseObject({ outcome: z.string(), cause: z.string(), count: z.number() })),
    ),
  ).describe("Per candidate, each distinct cause of the attempts that did not pass"),
  broken: typed<Diagnosis["broken"]>(
    z.array(z.looseObject({ candidate: z.string(), how: z.string(), hint: z.string() })),
  ),
  caseResults: typed<Diagnosis["caseResults"]>(
    z.array(z.looseObject({ caseId: z.string().nullable(), cells: z.array(z.looseObject({})) })),
  ),
  items: typed<Diagnosis["items"]>(
    z.array(z.looseObject({ caseId: z.string().nullable(), attempts: z.number() })),
  ),
};

/** The diagnosis as `--json` carries it: cases, causes per candidate, per-case results, items. */
export function diagnosisJson(d: Diagnosis) {
  return {
    cases: d.cases.ran?.length ?? 0,
    caseIds: d.cases.ran,
    bundleCases: d.cases.ofBundle,
    failureCauses: Object.fromEntries(d.candidates.map((c) => [c.candidate, c.causes])),
    broken: d.broken,
    caseResults: d.caseResults,
    items: d.items,
  };
}

export const BENCHMARK_FORMAT = defineFormat(
  "benchmark",
  1,
  "A benchmark's experiment: its scorecard, diagnosis and reports (`dvergr benchmark --json`).",
  z.object({
    bundle: fields.bundle,
    bundleId: fields.bundleId,
    experiment: fields.experiment,
    home: z.string(),
    room: fields.room,
    report: z.string().describe("The Markdown report's path"),
    reportHtml: z.string().describe("The HTML report's path"),
    complete: z.boolean(),
    scorecard: scorecardShape,
    ...diagnosisFields,
  }),
);

export const DEMO_FORMAT = defineFormat(
  "demo",
  1,
  "The demo's experiment: its scorecard and report (`dvergr demo --json`).",
  z.object({
    experiment: fields.experiment,
    report: z.string(),
    scorecard: scorecardShape,
  }),
);

export const EXPORT_FORMAT = defineFormat(
  "export",
  1,
  "What was exported, with the export's text unless it went to a file (`dvergr export --json`).",
  z.object({
    room: fields.room.optional().describe("A bundle of a room: the room"),
    ...exportFields,
    file: z.string().optional().describe("With -o: where the export was written"),
    export: z.string().optional().describe("Without -o: the export (EDN, dvergr-workflow/1)"),
  }),
);

export const CASES_FORMAT = defineFormat(
  "cases",
  1,
  "A case pack built from a table, with its certification (`dvergr cases --json`).",
  z.object({
    cases: z.number().int().describe("Rows of the table"),
    certified: z.number().int(),
    byReason: z.record(z.string(), z.number().int()),
    excluded: z.array(z.object({ id: z.string(), reasons: z.array(EXCLUSION_REASON) })),
    out: z.string().optional().describe("With --out: the directory written"),
    room: fields.room.optional().describe("With --room: the room written into"),
    bundle: fields.bundle.optional().describe("With --room: the bundle's name"),
    commit: z.string().nullable().optional().describe(
      "With --room: the commit; null when the room held it already",
    ),
  }),
);

export const EXPERIMENTS_FORMAT = defineFormat(
  "experiments",
  1,
  "The experiments of the homes, newest first (`dvergr experiments --json`).",
  z.object({
    homes: z.array(z.string()),
    experiments: z.array(z.object({
      experiment: fields.experiment,
      home: z.string(),
      room: fields.room,
      bundle: fields.bundle,
      bundleId: fields.bundleId,
      createdAt: fields.time,
      candidates: z.array(z.string()),
      cells: z.number().int(),
      graded: z.number().int(),
      complete: z.boolean(),
    })),
  }),
);

export const INIT_FORMAT = defineFormat(
  "init",
  1,
  "A bundle written from a template, and what to edit next (`dvergr init --json`).",
  z.object({
    bundle: fields.bundle,
    dir: z.string(),
    template: z.enum(["single", "dataset", "web"]),
    files: z.array(z.string()),
    next: z.array(z.string()),
  }),
);

export const CELLS_FORMAT = defineFormat(
  "cells",
  1,
  "Every cell of an experiment and how its latest try ended (`dvergr show EXPERIMENT --json`).",
  z.object({
    home: z.string(),
    room: fields.room,
    experiment: fields.experiment,
    bundle: fields.bundle,
    createdAt: fields.time,
    cells: typed<CellSummary[]>(z.array(z.object({
      candidate: z.string(),
      case: z.string().nullable(),
      repetition: z.number().int(),
      outcome: z.string().nullable().describe("null: not run yet"),
      reward: z.number().nullable(),
      cause: z.string().nullable(),
      tryNo: z.number().int().nullable(),
      elapsedMs: z.number().nullable(),
    }))),
    workers: z.array(z.object({
      owner: z.string().describe("The lease owner that committed the records (a worker's id)"),
      host: z.string().nullable(),
      pid: z.number().int().nullable(),
      state: z.string().nullable(),
      seenSecondsAgo: z.number().nullable(),
      records: z.number().int(),
      inFlight: z.number().int(),
    })).optional().describe("On a store shared by workers: who ran what, who holds cells now"),
  }),
);

export const SHOW_ATTEMPT_FORMAT = defineFormat(
  "show-attempt",
  1,
  "One attempt in full (`dvergr show EXPERIMENT/CANDIDATE/CASE/REP --json`); attempt_export's fields and the home.",
  z.looseObject({ home: z.string(), room: fields.room, ...attemptFields }),
);

export const STORE_STATUS_FORMAT = defineFormat(
  "store-status",
  1,
  "A PostgreSQL store's schema version (`dvergr store status --json`).",
  z.object({
    store: z.string().describe("The store's URL, its password left out"),
    schema: z.number().int(),
    known: z.number().int().describe("The schema version this dvergr knows"),
  }),
);

export const STORE_MIGRATE_FORMAT = defineFormat(
  "store-migrate",
  1,
  "A PostgreSQL store's migration (`dvergr store migrate --json`).",
  z.object({
    store: z.string(),
    from: z.number().int(),
    to: z.number().int(),
    applied: z.array(z.object({ version: z.number().int(), name: z.string() })),
  }),
);

export const ENQUEUE_FORMAT = defineFormat(
  "enqueue",
  1,
  "A benchmark enqueued in a shared store for workers (`dvergr benchmark --enqueue --json`).",
  z.object({
    bundle: fields.bundle,
    bundleId: fields.bundleId,
    experiment: fields.experiment,
    store: z.string().optional().describe("Where it was enqueued"),
    room: fields.room,
    cells: z.number().int(),
    enqueued: z.literal(true),
  }),
);

export const WORKER_FORMAT = defineFormat(
  "worker",
  1,
  "What a worker did before it ended (`dvergr worker --json`).",
  z.object({
    worker: z.string(),
    host: z.string(),
    reason: z.enum(["stopped", "idle", "closed"]),
    attempts: z.number().int(),
    closed: z.array(fields.experiment).describe("Experiments it closed (every cell recorded)"),
  }),
);

export const REGRADE_FORMAT = defineFormat(
  "regrade",
  1,
  "An experiment graded again: the new experiment, its scorecard and diagnosis, and what changed (`dvergr regrade --json`).",
  z.object({
    original: fields.experiment,
    experiment: fields.experiment,
    bundle: fields.bundle,
    bundleId: fields.bundleId,
    home: z.string(),
    room: fields.room,
    report: z.string(),
    reportHtml: z.string(),
    complete: z.boolean(),
    scorecard: scorecardShape,
    comparison: regradeComparisonShape,
    ...diagnosisFields,
  }),
);

/** The formats of the commands without an op. */
const CLI_FORMATS: JsonFormat[] = [
  REGRADE_FORMAT,
  TICK_FORMAT,
  ENQUEUE_FORMAT,
  WORKER_FORMAT,
  BENCHMARK_FORMAT,
  DEMO_FORMAT,
  EXPORT_FORMAT,
  CASES_FORMAT,
  EXPERIMENTS_FORMAT,
  INIT_FORMAT,
  CELLS_FORMAT,
  SHOW_ATTEMPT_FORMAT,
  STORE_STATUS_FORMAT,
  STORE_MIGRATE_FORMAT,
];

/**
 * Every format dvergr prints or returns, once each, sorted by id: the ops' (the MCP code
 * profile's included), the commands', errors.
 */
export function allFormats(): JsonFormat[] {
  const extra = [JS_EVAL_FORMAT, DESCRIBE_FORMAT];
  const byId = new Map<string, JsonFormat>();
  for (const f of [...allOps().map((o) => o.output), ...extra, ...CLI_FORMATS, ERROR_FORMAT]) {
    const known = byId.get(f.id);
    if (known && known !== f) throw new Error(`Two formats are named ${f.id}`);
    byId.set(f.id, f);
  }
  return [...byId.values()].sort((a, b) => a.id < b.id ? -1 : 1);
}
