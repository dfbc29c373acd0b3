import { basename, dirname, isAbsolute, join, resolve, sep } from "node:path";
import { shellWord } from "./shell_word.ts";
import { parseCommandArgs } from "./args.ts";
import type { CliContext } from "./context.ts";
import { CASES_FORMAT } from "./json_formats.ts";
import { printJson } from "./render.ts";
import { DvergrError, usageError } from "../core/errors.ts";
import { writeBundleDirOnce } from "../adapters/files/bundle_dir_once.ts";
import { bundleDir } from "../core/ops/room_bundles.ts";
import type { FileMap } from "../core/bundle/file_map.ts";
import { HOME_HELP, roomHomeDir, withOpContext } from "./home_arg.ts";
import {
  attachmentRefs,
  type Certification,
  type ExclusionReason,
} from "../core/casepack/certify.ts";
import { decodeText } from "../core/casepack/decode.ts";
import { DEFAULT_TOLERANCE } from "../core/casepack/rules.ts";
import { INPUT_LIMITS, readInputFile } from "../adapters/files/input_file.ts";
import { casePackFromTable } from "../adapters/files/table_file.ts";
import {
  completeSpec,
  parseColumnList,
  parseOutcome,
  type SpecDraft,
  specFromEdn,
} from "../core/casepack/spec.ts";

export const HELP = `dvergr cases TABLE --id COL --inputs a,b --outcome col:rule[:tolerance]…
             (--out DIR | --room ROOM [--home DIR]) [--attachments COL] [--task T] [--title T] [--doc D] [--shared FILE]…
             [--spec spec.edn] [--delimiter D] [--encoding E] [--format F] [--name N]
             [--force] [--json]

Turns a table of historical cases (inputs and the outcome each case actually had) into
a dataset bundle graded against those outcomes: one case per certified row, a generated
checker, task and calibration, and certification.edn saying why the other rows cannot
grade an answer (no-id, duplicate-id, unlabelled, missing-attachment,
conflicting-outcomes, outcome-not-gradable).

The table is CSV (delimiter , ; or tab, given or detected; quotes, a byte-order mark and
CRLF as Excel and DATEV write them), .tsv, JSON lines (.jsonl) or EDN (a vector of maps).

Options:
  --id COL              the column naming a case
  --inputs a,b          the columns an agent sees in /docs/case.edn (repeatable)
  --outcome col:rule[:tolerance]
                        an expected column and its rule, once per column; rules:
                        exact, ci (ignoring case and spacing), number (within the
                        tolerance, default ${DEFAULT_TOLERANCE}; 1.234,56 and 1,234.56 both read),
                        set (a vector, or text split on , ; |), date (yyyy-mm-dd or
                        dd.mm.yyyy)
  --attachments COL     columns naming text files beside the table, copied to /docs/
                        (never read from outside the table's directory)
  --task T              what to do with a case (the answer contract is appended);
                        default: generated from the columns
  --title T, --doc D    the bundle's title (default: its name) and description
  --shared FILE         a file every case's world has, as /docs/<its name> (repeatable)
  --spec FILE           the same spec as an EDN map (:name :title :doc :id :inputs
                        :attachments :expected :task :shared); flags override its keys
  --delimiter D         the CSV delimiter: , ; tab or any one character
  --encoding E          the text encoding when not UTF-8, e.g. windows-1252 (Excel and
                        DATEV on Windows) or iso-8859-1; applies to attachments too
  --format F            csv, tsv, jsonl or edn (default: by the file's extension)
  --name N              the bundle's name (default: the --out directory's name)
  --out DIR             where to write the bundle (atomically)
  --room ROOM           write the bundle into room ROOM as workflows/<name>/ instead: one
                        commit, one packfile, no directory tree on disk (--name, else the
                        table's file name, names it)
${HOME_HELP}
  --force               replace DIR (or the room's workflows/<name>/) when it holds files
  --json                print {cases, certified, byReason, excluded, out} as JSON (with
                        --room: room and commit instead of out)
  -h, --help            show this help

Example:
  dvergr cases examples/tables/bookings.csv --id Beleg \\
    --inputs Datum,Betrag,Buchungstext --outcome Gegenkonto:exact --outcome BU:exact \\
    --outcome Netto:number:0.01 --shared examples/tables/kontenrahmen.txt --out bookings

Exit status: 0 written; 1 no case is certified (nothing written); 2 bad input.
`;

export const OPTIONS = {
  id: { type: "string" },
  inputs: { type: "string", multiple: true },
  attachments: { type: "string", multiple: true },
  outcome: { type: "string", multiple: true },
  task: { type: "string" },
  title: { type: "string" },
  doc: { type: "string" },
  shared: { type: "string", multiple: true },
  spec: { type: "string" },
  delimiter: { type: "string" },
  encoding: { type: "string" },
  format: { type: "string" },
  name: { type: "string" },
  out: { type: "string" },
  room: { type: "string" },
  home: { type: "string" },
  force: { type: "boolean" },
  json: { type: "boolean" },
} as const;

const DELIMITER_NAMES: Record<string, string> = {
  tab: "\t",
  "\\t": "\t",
  comma: ",",
  semicolon: ";",
  pipe: "|",
};

/** The delimiter a --delimiter value names (`tab`, `\t`, `;`, …), or a usage error. */
export function delimiterOption(text: string): string {
  const d = DELIMITER_NAMES[text.toLowerCase()] ?? text;
  if (d.length !== 1 || d === '"' || d === "\n" || d === "\r") {
    throw usageError(
      `Cannot use --delimiter "${text}": expected one character other than a quote or line break`,
      'Write --delimiter ";" , --delimiter "," or --delimiter tab',
    );
  }
  return d;
}

async function readText(
  path: string,
  shown: string,
  what: string,
  encoding?: string,
): Promise<string> {
  const bytes = await readInputFile(path, { shown, what, maxBytes: INPUT_LIMITS.text });
  return decodeText(bytes, { file: shown, encoding, what });
}

function reasonText(r: ExclusionReason): string {
  if (r.reason === "unlabelled" || r.reason === "outcome-not-gradable") {
    return `${r.reason} (${r.fields.join(", ")})`;
  }
  if (r.reason === "missing-attachment") return `${r.reason} (${r.columns.join(", ")})`;
  if (r.reason === "no-id") return `${r.reason} (row ${r.row})`;
  return r.reason;
}

/** The one-line summary: `264 cases: 259 certified; excluded: 2 conflicting-outcomes, …`. */
export function countsLine(cert: Certification): string {
  const excluded = Object.entries(cert.byReason)
    .filter(([k]) => k !== "certified")
    .map(([k, n]) => `${n} ${k}`);
  return `${cert.cases} case${cert.cases === 1 ? "" : "s"}: ${cert.certified} certified; ` +
    (excluded.length > 0 ? `excluded: ${excluded.join(", ")}` : "none excluded");
}

function excludedList(cert: Certification) {
  return cert.verdicts.filter((v) => v.status === "excluded").map((v) => ({
    id: v.id,
    reasons: v.reasons,
  }));
}

const SHOWN_EXCLUSIONS = 20;

type Values = ReturnType<typeof parseCommandArgs<typeof OPTIONS>>["values"];

/** The spec from --spec (when given) with the flags over it. */
async function specOf(values: Values, out: string, at: (p: string) => string) {
  const draft: SpecDraft = values.spec !== undefined
    ? specFromEdn(await readText(at(values.spec), values.spec, "spec"), values.spec)
    : { origin: {} };
  const origin = draft.origin ?? {};
  if (values.id !== undefined) [draft.id, origin.id] = [values.id, "--id"];
  if (values.inputs !== undefined) {
    [draft.inputs, origin.inputs] = [values.inputs.flatMap(parseColumnList), "--inputs"];
  }
  if (values.attachments !== undefined) {
    draft.attachments = values.attachments.flatMap(parseColumnList);
    origin.attachments = "--attachments";
  }
  if (values.outcome !== undefined) {
    [draft.expected, origin.expected] = [values.outcome.map((o) => parseOutcome(o)), "--outcome"];
  }
  if (values.task !== undefined) draft.task = values.task;
  if (values.title !== undefined) draft.title = values.title;
  if (values.doc !== undefined) draft.doc = values.doc;
  draft.name = values.name ?? draft.name ?? basename(at(out));
  draft.origin = origin;
  if (values.shared !== undefined) {
    const shared = new Map(draft.shared ?? []);
    const fromFlags = new Set<string>();
    for (const file of values.shared) {
      const world = "/docs/" + basename(file);
      if (fromFlags.has(world)) {
        throw usageError(
          `Cannot share "${file}": another --shared file is also named ${basename(file)}`,
          "Shared files land in /docs/ by their name; rename one of them",
        );
      }
      fromFlags.add(world);
      shared.set(world, await readText(at(file), file, "shared file", values.encoding));
    }
    draft.shared = shared;
  }
  return completeSpec(draft);
}

/** Reads the command line: flags and arguments checked, nothing touched. */
export function parse(args: string[]) {
  const { values, positionals } = parseCommandArgs("cases", args, OPTIONS);
  if (positionals.length !== 1) {
    throw usageError(
      positionals.length === 0
        ? '"dvergr cases" needs a table'
        : `"dvergr cases" takes one table, got ${positionals.length}: ${positionals.join(" ")}`,
      "Run `dvergr cases --help`",
    );
  }
  return { values, positionals };
}

export async function run(ctx: CliContext, opts: ReturnType<typeof parse>): Promise<number> {
  const { values, positionals } = opts;
  const tablePath = positionals[0];
  if (values.room !== undefined) return await runIntoRoom(values, tablePath, ctx);
  if (values.out === undefined || values.out.trim() === "") {
    throw usageError(
      '"dvergr cases" needs --out DIR or --room ROOM',
      "Name the directory to write the bundle to, or the room to write it into",
    );
  }
  const at = (p: string) => resolve(ctx.cwd, p);
  const spec = await specOf(values, values.out, at);
  const delimiter = values.delimiter === undefined ? undefined : delimiterOption(values.delimiter);
  await refuseNonEmpty(at(values.out), values.out, values.force === true);
  const inputs: [string, string][] = [[at(tablePath), `the table "${tablePath}"`]];
  if (values.spec !== undefined) inputs.push([at(values.spec), `the spec "${values.spec}"`]);
  for (const f of values.shared ?? []) inputs.push([at(f), `the shared file "${f}"`]);
  if (values.force) await refuseReplacingInputs(at(values.out), values.out, inputs);

  const { table, build } = await casePackFromTable(at(tablePath), spec, {
    format: values.format,
    delimiter,
    encoding: values.encoding,
    shown: tablePath,
  });
  if (values.force) {
    const tableDir = dirname(at(tablePath));
    const attached = attachmentRefs(table, spec).map((ref): [string, string] => [
      isAbsolute(ref) ? ref : join(tableDir, ref),
      `the attachment "${ref}"`,
    ]);
    await refuseReplacingInputs(at(values.out), values.out, attached);
  }
  const cert = build.certification;
  if (build.files === null) throw notCertified(tablePath, cert);
  await writeBundleDirOnce(at(values.out), build.files, { force: values.force === true });

  if (values.json) {
    printJson(ctx, CASES_FORMAT, { ...countsJson(cert), out: values.out });
    return 0;
  }
  printSummary(ctx, cert, `Wrote ${values.out}`, build.files.size, [values.out]);
  return 0;
}

/**
 * `--room ROOM`: the case pack goes straight into the room's git repository as
 * workflows/<name>/, one commit (one packfile); nothing is written as a directory tree.
 */
async function runIntoRoom(values: Values, tablePath: string, ctx: CliContext): Promise<number> {
  if (values.out !== undefined) {
    throw usageError(
      '"dvergr cases" takes one of --out DIR or --room ROOM, not both',
      "Write the bundle to a directory (--out) or into a room (--room)",
    );
  }
  const room = values.room!;
  const at = (p: string) => resolve(ctx.cwd, p);
  const stem = basename(tablePath).replace(/\.[^.]*$/, "");
  const spec = await specOf({ ...values, name: values.name ?? stem }, stem, at);
  const delimiter = values.delimiter === undefined ? undefined : delimiterOption(values.delimiter);
  const { build } = await casePackFromTable(at(tablePath), spec, {
    format: values.format,
    delimiter,
    encoding: values.encoding,
    shown: tablePath,
  });
  const cert = build.certification;
  if (build.files === null) throw notCertified(tablePath, cert);
  const files: FileMap = build.files;
  const dir = bundleDir(spec.name);
  const commit = await withOpContext(ctx, roomHomeDir(values.home, ctx), {}, async (op) => {
    const rooms = op.home.rooms;
    if (!(await rooms.hasRoom(room))) {
      throw new DvergrError("NOT_FOUND", `Cannot write into room "${room}": no such room`, {
        hint: `Create it first: \`dvergr room create ${room}\``,
        details: { room },
      });
    }
    if (!values.force && (await rooms.readFiles(room, dir)).size > 0) {
      throw new DvergrError(
        "TARGET_EXISTS",
        `Cannot write case pack "${spec.name}" into room ${room}: ${dir}/ already holds files`,
        {
          hint: "Pass --force to replace it (the room's history keeps the old files), or " +
            "--name to write it under another name",
          details: { room, name: spec.name },
        },
      );
    }
    return await rooms.replaceDir(
      room,
      dir,
      files,
      `Case pack ${spec.name} from ${basename(tablePath)} (${cert.certified} cases)`,
      { removeFilesInTheWay: values.force === true },
    );
  });
  const where = `${room}/${spec.name}`;
  if (values.json) {
    printJson(ctx, CASES_FORMAT, { ...countsJson(cert), room, bundle: spec.name, commit });
    return 0;
  }
  printSummary(
    ctx,
    cert,
    commit === null
      ? `Room ${room} already holds ${dir}/ as built`
      : `Wrote ${dir}/ of room ${room}`,
    files.size,
    values.home === undefined ? [where] : [where, "--home", values.home],
  );
  return 0;
}

function countsJson(cert: Certification) {
  return {
    cases: cert.cases,
    certified: cert.certified,
    byReason: cert.byReason,
    excluded: excludedList(cert),
  };
}

function printSummary(
  ctx: CliContext,
  cert: Certification,
  wrote: string,
  fileCount: number,
  bundleArgs: string[],
): void {
  const out = (s: string) => ctx.stdout(s + "\n");
  out(countsLine(cert));
  const excluded = cert.verdicts.filter((v) => v.status === "excluded");
  if (excluded.length > 0) {
    const width = Math.min(24, Math.max(...excluded.map((v) => v.id.length)));
    for (const v of excluded.slice(0, SHOWN_EXCLUSIONS)) {
      const where = v.line !== undefined ? `line ${v.line}` : `row ${v.row}`;
      out(`  ${v.id.padEnd(width)}  ${where.padEnd(10)} ${v.reasons.map(reasonText).join("; ")}`);
    }
    if (excluded.length > SHOWN_EXCLUSIONS) {
      out(`  … and ${excluded.length - SHOWN_EXCLUSIONS} more (certification.edn lists them all)`);
    }
  }
  out(`${wrote}: ${cert.certified} case${cert.certified === 1 ? "" : "s"}, ${fileCount} files`);
  // Commands that run as printed: the bundle (and the home of a room's) quoted for a shell.
  const bundle = bundleArgs.map(shellWord).join(" ");
  out("Next:");
  out(`  dvergr check ${bundle}`);
  out(`  dvergr calibrate ${bundle}`);
  out(
    `  dvergr benchmark ${bundle} --candidate builtin:reference   ` +
      "# and yours: --candidate 'mine=cmd:COMMAND'",
  );
}

function notCertified(tablePath: string, cert: Certification): DvergrError {
  const top = Object.entries(cert.byReason).sort((a, b) => b[1] - a[1])[0];
  return new DvergrError(
    "NOT_CERTIFIED",
    `No case of "${tablePath}" is certified, so nothing was written: ${countsLine(cert)}`,
    {
      result: true,
      hint: cert.cases === 0 ? "The table holds no cases: it has no data rows" : hintFor(top?.[0]),
      details: {
        cases: cert.cases,
        certified: 0,
        byReason: cert.byReason,
        excluded: excludedList(cert),
      },
    },
  );
}

function hintFor(reason: string | undefined): string {
  switch (reason) {
    case "no-id":
      return "The id column is blank in every row: check --id";
    case "duplicate-id":
      return "Every id occurs more than once: check that --id names a column unique per case";
    case "unlabelled":
      return "The outcome columns are blank: check --outcome";
    case "missing-attachment":
      return "No attachment could be read: they are text files at or below the table's directory";
    case "conflicting-outcomes":
      return "Rows with the same inputs have different outcomes: add the inputs that tell " +
        "them apart to --inputs";
    case "outcome-not-gradable":
      return "The checker cannot read the outcomes under their rules: check the rules of " +
        "--outcome (e.g. number for amounts, date for dates)";
    default:
      return "certification.edn would list why each row was excluded";
  }
}

async function refuseNonEmpty(path: string, shown: string, force: boolean): Promise<void> {
  if (force) return;
  try {
    const st = await Deno.stat(path);
    if (!st.isDirectory) {
      throw new DvergrError(
        "TARGET_EXISTS",
        `Cannot write "${shown}": a file of that name exists`,
        {
          hint: "Choose another output directory",
        },
      );
    }
    for await (const _ of Deno.readDir(path)) {
      throw new DvergrError(
        "TARGET_EXISTS",
        `Cannot write "${shown}": the directory exists and is not empty`,
        { hint: "Choose another directory, or pass --force to replace it" },
      );
    }
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return;
    throw e;
  }
}

/** The path with its links resolved, or as given when it does not exist. */
async function realOrGiven(path: string): Promise<string> {
  try {
    return await Deno.realPath(path);
  } catch {
    return path;
  }
}

/**
 * Refuses to replace (--force) a directory that holds one of the command's own input
 * files: replacing it would delete the table, spec or attachments being read.
 */
async function refuseReplacingInputs(
  out: string,
  shown: string,
  inputs: [path: string, what: string][],
): Promise<void> {
  const dir = await realOrGiven(out);
  for (const [path, what] of inputs) {
    const real = await realOrGiven(path);
    if (real === dir || real.startsWith(dir.endsWith(sep) ? dir : dir + sep)) {
      throw new DvergrError(
        "TARGET_EXISTS",
        `Cannot replace "${shown}": it holds ${what}, which --force would delete`,
        { hint: "Write the bundle to a directory of its own, e.g. --out packs/<name>" },
      );
    }
  }
}
