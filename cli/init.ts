import { basename, join, relative, resolve } from "node:path";
import { parseCommandArgs } from "./args.ts";
import type { CliContext } from "./context.ts";
import { INIT_FORMAT } from "./json_formats.ts";
import { printJson } from "./render.ts";
import { DvergrError, usageError } from "../core/errors.ts";
import { checkBundleName, suggestName } from "../core/bundle/bundle_name.ts";
import type { FileMap } from "../core/bundle/file_map.ts";
import { writeBundleDir } from "../adapters/files/bundle_dir.ts";
import { shellWord } from "./shell_word.ts";
import { TEMPLATE_FILES, type TemplateName, TEMPLATES } from "./init_templates.ts";

export const HELP = `dvergr init [DIR] [--template single|dataset|web] [--json]

Writes a new workflow bundle into DIR (default: the working directory; it must be empty or
not exist yet), named after DIR, ready to edit: it passes \`dvergr check\` and
\`dvergr calibrate\` as written, and the command says what to edit next.

Templates:
  single   one environment: a task, its documents (fixtures/), the facts of the right
           answer (gold.edn), checker.js and calibration.edn (default)
  dataset  one task over many cases: cases/<id>/ with each case's documents and gold
  web      a task over a frozen web (web.edn: pages by URL, no network); the checker sees
           the pages the attempt fetched and accepts only quotes from them

Options:
  --template T  single (default), dataset or web
  --json        print what was written as JSON
  -h, --help    show this help

Example:
  dvergr init refund-check --template dataset && dvergr calibrate refund-check

Exit status: 0 written; 2 bad input (DIR not empty, a bad name or template); nothing is
written then.
`;

export const OPTIONS = {
  template: { type: "string" },
  json: { type: "boolean" },
} as const;

/** Reads the command line: flags and arguments checked, nothing touched. */
export function parse(args: string[]) {
  const { values, positionals } = parseCommandArgs("init", args, OPTIONS);
  if (positionals.length > 1) {
    throw usageError(
      `"dvergr init" takes at most one directory, got ${positionals.length}`,
      "Write dvergr init DIR [--template single|dataset|web]",
    );
  }
  const template = (values.template ?? "single") as TemplateName;
  if (!TEMPLATES.includes(template)) {
    throw usageError(
      `Cannot use --template "${values.template}": there is no such template`,
      `Choose one of ${TEMPLATES.join(", ")}`,
    );
  }
  return { dir: positionals[0] ?? ".", template, json: values.json === true };
}

/** "refund-check" → "Refund check". */
function titleOf(name: string): string {
  const words = name.replace(/-+/g, " ").trim();
  return words.charAt(0).toUpperCase() + words.slice(1);
}

/** The template's files for a bundle named `name`: its title is the name's words. */
export function initFiles(template: TemplateName, name: string): FileMap {
  const files = new Map(TEMPLATE_FILES[template]);
  const workflow = files.get("workflow.edn")!;
  files.set(
    "workflow.edn",
    workflow.replace(/^ *\{:title "[^"]*"/m, `{:title ${JSON.stringify(titleOf(name))}`),
  );
  return files;
}

/** What to edit, in order, for each template. */
const NEXT: Record<TemplateName, string[]> = {
  single: [
    "workflow.edn: say the task (:task, with {param}s from :params) and what is graded (:capture)",
    "fixtures/: the documents every attempt's world starts with (fixtures/docs/x → /docs/x)",
    "gold.edn: the facts of the right answer; checker.js: check() grades an answer against them",
    "calibration.edn: the right answer, and a damaged one for each way to go wrong",
  ],
  dataset: [
    "workflow.edn: say the task (:task, with {param}s from :params) and what is graded (:capture)",
    "cases/<id>/: one directory per case, its documents under fixtures/ and its gold.edn " +
    "(or build cases from a table: dvergr cases --help)",
    "checker.js: check() grades an answer against the case's gold",
    "calibration.edn: the right answer for :case, and a damaged one for each way to go wrong",
  ],
  web: [
    "workflow.edn: say the task; :web :frozen answers from web.edn alone",
    "web.edn: the pages the task needs, by URL (or record a live run's: dvergr freeze --help)",
    "gold.edn and checker.js: what a right answer says, and the quotes it must fetch",
    "calibration.edn: the right answer with the pages it fetched, and damaged ones",
  ],
};

/** Whether `dir` is missing (null) or a directory with nothing in it (true). */
async function emptyDir(dir: string): Promise<boolean | null> {
  try {
    const stat = await Deno.stat(dir);
    if (!stat.isDirectory) return false;
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return null;
    throw e;
  }
  for await (const _ of Deno.readDir(dir)) return false;
  return true;
}

/**
 * Writes the files into an existing empty directory (the working directory, perhaps, which
 * cannot be renamed into place): on any failure what was written is removed again.
 */
async function writeInto(dir: string, files: FileMap): Promise<void> {
  try {
    for (const [path, text] of files) {
      const full = join(dir, path);
      await Deno.mkdir(join(full, ".."), { recursive: true });
      await Deno.writeTextFile(full, text, { createNew: true });
    }
  } catch (e) {
    for await (const entry of Deno.readDir(dir)) {
      await Deno.remove(join(dir, entry.name), { recursive: true }).catch(() => {});
    }
    throw e;
  }
}

export async function run(ctx: CliContext, opts: ReturnType<typeof parse>): Promise<number> {
  const dir = resolve(ctx.cwd, opts.dir);
  const name = basename(dir);
  checkBundleName(
    name,
    `The bundle is named after its directory: give one such as "${
      suggestName(name)
    }" (dvergr init ${suggestName(name)})`,
  );
  const state = await emptyDir(dir);
  if (state === false) {
    throw new DvergrError(
      "TARGET_EXISTS",
      `Cannot write a bundle into "${opts.dir}": it is not an empty directory`,
      { hint: `Give a new directory: dvergr init ${name}-2`, details: { dir } },
    );
  }
  const files = initFiles(opts.template, name);
  if (state === null) await writeBundleDir(dir, files);
  else await writeInto(dir, files);

  const shown = shellWord(relative(ctx.cwd, dir) || ".");
  const next = NEXT[opts.template];
  if (opts.json) {
    printJson(ctx, INIT_FORMAT, {
      bundle: name,
      dir,
      template: opts.template,
      files: [...files.keys()],
      next,
    });
    return 0;
  }
  const out = (s: string) => ctx.stdout(s + "\n");
  out(`Wrote the bundle "${name}" (template ${opts.template}, ${files.size} files) in ${shown}`);
  out("It passes dvergr check and dvergr calibrate as written. Edit it next:");
  next.forEach((step, i) => out(`  ${i + 1}. ${step}`));
  out(`Then: dvergr calibrate ${shown}   (until it says calibrated)`);
  out(
    `      dvergr benchmark ${shown} --candidate builtin:reference --candidate 'mine=cmd:YOUR AGENT'`,
  );
  return 0;
}
