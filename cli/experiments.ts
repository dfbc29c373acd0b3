import { parseCommandArgs } from "./args.ts";
import type { CliContext } from "./context.ts";
import { EXPERIMENTS_FORMAT } from "./json_formats.ts";
import { printJson } from "./render.ts";
import { usageError } from "../core/errors.ts";
import {
  type ListedExperiment,
  listedExperiments,
  newestFirst,
} from "../core/ops/experiment_list.ts";
import {
  EXPERIMENT_HOME_HELP,
  type ExperimentHome,
  experimentHomes,
  openExperimentHome,
} from "./experiment_homes.ts";
import { shellWord } from "./shell_word.ts";

export const HELP = `dvergr experiments [--home DIR] [--json]

Lists the experiments of the home, newest first: id, when it was first run, bundle, room,
candidates, and how many of its cells have a verdict ("complete" when all do). Every
experiment's reports are kept in <home>/reports/<experiment>/; \`dvergr report\` writes
them again, \`dvergr show\` shows their cells.

Options:
${EXPERIMENT_HOME_HELP}
  --json      print the list as JSON
  -h, --help  show this help

Example:
  dvergr experiments --home workflow-runs/invoice-fields

Exit status: 0 (also when there are none); 2 bad input.
`;

export const OPTIONS = {
  home: { type: "string" },
  store: { type: "string" },
  blobs: { type: "string" },
  json: { type: "boolean" },
} as const;

/** Reads the command line: flags and arguments checked, nothing touched. */
export function parse(args: string[]) {
  const { values, positionals } = parseCommandArgs("experiments", args, OPTIONS);
  if (positionals.length > 0) {
    throw usageError(
      `"dvergr experiments" takes no arguments, got ${positionals.join(" ")}`,
      "Give the home with --home DIR",
    );
  }
  return { values };
}

async function listAll(homes: ExperimentHome[]): Promise<ListedExperiment[]> {
  const out: ListedExperiment[] = [];
  for (const h of homes) {
    const home = await openExperimentHome(h);
    try {
      out.push(...await listedExperiments(home, h.label));
    } finally {
      await home.close();
    }
  }
  return newestFirst(out);
}

export async function run(ctx: CliContext, opts: ReturnType<typeof parse>): Promise<number> {
  const found = await experimentHomes(opts.values, ctx);
  const homes = found.map((h) => h.label);
  const listed = await listAll(found);
  if (opts.values.json) {
    const experiments = listed.map(({ bundle, ...e }) => ({
      ...e,
      bundle: bundle.name,
      bundleId: bundle.id,
    }));
    printJson(ctx, EXPERIMENTS_FORMAT, { homes, experiments });
    return 0;
  }
  const out = (s: string) => ctx.stdout(s + "\n");
  if (listed.length === 0) {
    out(
      homes.length === 0
        ? "No home here: benchmark a bundle first (dvergr demo, or dvergr benchmark BUNDLE …)"
        : `No experiments in ${homes.join(", ")}`,
    );
    return 0;
  }
  const bw = Math.max(6, ...listed.map((e) => e.bundle.name.length));
  out(`${"experiment".padEnd(8)}  ${"first run".padEnd(16)}  ${"bundle".padEnd(bw)}  status`);
  for (const e of listed) {
    const status = e.complete ? "complete" : `${e.graded} of ${e.cells} cells graded`;
    out(
      `${e.experiment.slice(0, 8)}  ${e.createdAt.slice(0, 16).replace("T", " ")}  ${
        e.bundle.name.padEnd(bw)
      }  ${status}; ${e.candidates.length} candidates: ${e.candidates.join(", ")}`,
    );
  }
  if (opts.values.home === undefined) out(`Homes: ${homes.join(", ")}`);
  // A store's URL may hold a password: the hint names the flag, not the URL.
  const home = opts.values.store !== undefined
    ? " --store URL"
    : opts.values.home === undefined
    ? ""
    : ` --home ${shellWord(opts.values.home)}`;
  const id = listed[0].experiment.slice(0, 8);
  out(`Its cells: dvergr show ${id}${home}; its report: dvergr report ${id}${home}`);
  return 0;
}
