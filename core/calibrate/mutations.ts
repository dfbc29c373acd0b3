/**
 * Automatic damage: variants of a bundle's calibration reference derived mechanically,
 * each named. A damaging mutation must lower the reward; an invariance mutation must not
 * move it. Each mutation changes every place of its kind at once (every number, every
 * string, every map, every list, every file), so a checker that grades any of them sees
 * it. EDN answers (files named `*.edn` that read as one value) are mutated as data with
 * the project's reader and writer, other answers as text; a mutation with nothing to
 * change is listed as not applicable, with the reason. Pure and deterministic.
 */
import type { Bundle } from "../bundle/types.ts";
import { fillTask } from "../bundle/task.ts";
import { caseOf } from "../bundle/case_of.ts";
import { readEdn } from "../edn/read.ts";
import type { EdnValue } from "../edn/values.ts";
import { writeEdn } from "../edn/write.ts";
import {
  changeStrings,
  dropLast,
  editNumbers,
  integersAsFloats,
  repeatLast,
  reverseKeys,
  rewriteEdn,
  spacedLayout,
  swapValues,
  vectorsAsLists,
} from "./edn_mutations.ts";
import {
  changeWords,
  dropLastLine,
  editTextNumbers,
  firstHalf,
  indentLines,
  NUMBER_EDITS,
  repeatLastLine,
  toggleTrailingNewline,
} from "./text_mutations.ts";

export type MutationKind = "damaging" | "invariance";

/** A mutation of the reference, planned: the answer to grade, or why it does not apply. */
export type PlannedMutation =
  & { name: string; kind: MutationKind; description: string }
  & (
    | { applies: true; files: Record<string, string>; caseId: string | null }
    | { applies: false; reason: string }
  );

/** An answer file as the mutations see it: its text, and its value when it is EDN. */
interface AnswerFile {
  text: string;
  edn: EdnValue | undefined;
}

/** How one mutation changes one file: the new text, or null when it changes nothing. */
interface FileMutation {
  name: string;
  kind: MutationKind;
  description: string;
  /** Why it does not apply, when it changes no file. */
  reason: string;
  change(file: AnswerFile): string | null;
}

/** Written as the file was: multi-line when it was, its trailing newline kept. */
function writeLike(file: AnswerFile, v: EdnValue): string {
  const pretty = file.text.trim().includes("\n");
  return writeEdn(v, { pretty }) + (/\n$/.test(file.text) ? "\n" : "");
}

/** A structural mutation of EDN files (other files: `text`, or unchanged). */
function structural(
  visit: Parameters<typeof rewriteEdn>[1],
  text: ((s: string) => string | null) | null,
): (file: AnswerFile) => string | null {
  return (file) => {
    if (file.edn === undefined) return text ? text(file.text) : null;
    const out = rewriteEdn(file.edn, visit);
    return writeEdn(out) === writeEdn(file.edn) ? null : writeLike(file, out);
  };
}

const damaging = (
  name: string,
  description: string,
  reason: string,
  change: FileMutation["change"],
): FileMutation => ({ name, kind: "damaging", description, reason, change });

const invariance = (
  name: string,
  description: string,
  reason: string,
  change: FileMutation["change"],
): FileMutation => ({ name, kind: "invariance", description, reason, change });

const NUMBER_WORDS: Record<keyof typeof NUMBER_EDITS, string> = {
  "numbers-plus-one": "every number plus 1",
  "numbers-minus-one": "every number minus 1",
  "numbers-times-ten": "every number times 10",
  "numbers-negated": "every number negated",
};

/** The per-file mutations, in the order they are reported (whole-answer ones come first). */
const FILE_MUTATIONS: FileMutation[] = [
  damaging(
    "empty-answer",
    "every answer file empty",
    "every answer file is empty",
    (f) => f.text === "" ? null : "",
  ),
  damaging("cut-in-half", "every answer file cut to its first half", "every answer file is empty", (
    f,
  ) => firstHalf(f.text)),
  damaging(
    "values-swapped",
    "in every map, the values of two keys swapped",
    "the answer has no map with two different values (maps are read from EDN answers only)",
    structural(swapValues, null),
  ),
  ...Object.entries(NUMBER_EDITS).map(([name, edit]) =>
    damaging(
      name,
      NUMBER_WORDS[name as keyof typeof NUMBER_EDITS],
      name === "numbers-negated"
        ? "the answer has no numbers (other than 0)"
        : "the answer has no numbers",
      structural(editNumbers(edit), (s) => editTextNumbers(s, edit)),
    )
  ),
  damaging(
    "one-char-changed",
    "every string (in text: every word) with one character changed",
    "the answer has no strings or words",
    structural(changeStrings, changeWords),
  ),
  damaging(
    "entry-dropped",
    "every list without its last entry (in text: the last line)",
    "the answer has no list (EDN) or fewer than two lines (text)",
    structural(dropLast, dropLastLine),
  ),
  damaging(
    "entry-duplicated",
    "every vector and list with its last entry repeated (in text: the last line)",
    "the answer has no vector or list (EDN) or fewer than two lines (text)",
    structural(repeatLast, repeatLastLine),
  ),
  invariance(
    "whitespace",
    "other whitespace and indentation (EDN: one entry per line; text: lines indented)",
    "every answer file is blank",
    (f) => (f.edn === undefined ? indentLines(f.text) : spacedLayout(f.edn)),
  ),
  invariance(
    "key-order",
    "every map with its keys in reverse order",
    "the answer has no map with two keys (maps are read from EDN answers only)",
    structural(reverseKeys, null),
  ),
  invariance(
    "trailing-newline",
    "a trailing newline added (removed where there is one)",
    "the answer has no files",
    (f) => toggleTrailingNewline(f.text),
  ),
  invariance(
    "integer-as-float",
    "every integer written as a float (1 → 1.0)",
    "the answer has no integers in EDN",
    structural(integersAsFloats, null),
  ),
  invariance(
    "vectors-as-lists",
    "every vector written as a list ([1 2] → (1 2))",
    "the answer has no vectors in EDN",
    structural(vectorsAsLists, null),
  ),
];

/** The reference's files, each with its EDN value when it is a `.edn` file that reads. */
function answerFiles(reference: Record<string, string>): Map<string, AnswerFile> {
  const files = new Map<string, AnswerFile>();
  for (const path of Object.keys(reference).sort()) {
    const text = reference[path];
    let edn: EdnValue | undefined;
    if (path.endsWith(".edn")) {
      try {
        edn = readEdn(text);
      } catch {
        edn = undefined;
      }
    }
    files.set(path, { text, edn });
  }
  return files;
}

/** Gold as canonical text (keys sorted), to tell cases apart. */
function goldText(v: unknown): string {
  return JSON.stringify(
    v,
    (_k, x) =>
      x && typeof x === "object" && !Array.isArray(x)
        ? Object.fromEntries(Object.keys(x).sort().map((k) => [k, x[k]]))
        : x,
  ) ?? "null";
}

/**
 * The case whose gold grades another answer: the first after the reference's case (in
 * case order, wrapping around) whose gold differs from the reference case's gold.
 */
function otherCase(bundle: Bundle, caseId: string | null): PlannedMutation {
  const head = {
    name: "other-case",
    kind: "damaging" as const,
    description: "the reference graded as the answer of another case",
  };
  if (bundle.cases.length === 0) {
    return { ...head, applies: false, reason: "the bundle is not a dataset (it has no cases)" };
  }
  const goldOf = (id: string | null) => {
    const c = caseOf(bundle, id);
    return goldText(c && c.gold !== null ? c.gold : bundle.gold);
  };
  const own = goldOf(caseId);
  const start = Math.max(0, bundle.cases.findIndex((c) => c.id === caseId));
  for (let k = 1; k <= bundle.cases.length; k++) {
    const c = bundle.cases[(start + k) % bundle.cases.length];
    if (c.id !== caseId && goldOf(c.id) !== own) {
      return {
        ...head,
        description: `the reference graded as the answer of case "${c.id}"`,
        applies: true,
        files: { ...bundle.calibration!.reference! },
        caseId: c.id,
      };
    }
  }
  return { ...head, applies: false, reason: "every other case has the same gold" };
}

/**
 * Every automatic mutation of the bundle's calibration reference, in report order:
 * damaging ones first (no answer file, empty, the task text as the answer, …, another
 * case's answer), then the invariances. Empty when the calibration has no reference.
 */
export function referenceMutations(bundle: Bundle): PlannedMutation[] {
  const reference = bundle.calibration?.reference;
  if (!reference) return [];
  const caseId = bundle.calibration!.case ?? null;
  const files = answerFiles(reference);
  const paths = [...files.keys()];
  const task = fillTask(bundle.definition.task, bundle.definition.params);
  const plan = (m: Omit<FileMutation, "change">, change: FileMutation["change"]) => {
    const out: Record<string, string> = {};
    let changed = false;
    for (const p of paths) {
      const f = files.get(p)!;
      const text = change(f);
      if (text !== null && text !== f.text) changed = true;
      out[p] = text ?? f.text;
    }
    const head = { name: m.name, kind: m.kind, description: m.description };
    return (changed
      ? { ...head, applies: true, files: out, caseId }
      : { ...head, applies: false, reason: m.reason }) as PlannedMutation;
  };
  const none: PlannedMutation = paths.length === 0
    ? {
      name: "no-answer",
      kind: "damaging",
      description: "no answer file",
      applies: false,
      reason: "the reference has no files",
    }
    : {
      name: "no-answer",
      kind: "damaging",
      description: "no answer file",
      applies: true,
      files: {},
      caseId,
    };
  const taskAnswer = plan({
    name: "task-as-answer",
    kind: "damaging",
    description: "the task text as every answer file",
    reason: "every answer file already is the task text",
  }, () => task);
  const [empty, ...rest] = FILE_MUTATIONS.map((m) => plan(m, m.change));
  const invariances = rest.filter((m) => m.kind === "invariance");
  const damages = rest.filter((m) => m.kind === "damaging");
  return [none, empty, taskAnswer, ...damages, otherCase(bundle, caseId), ...invariances];
}
