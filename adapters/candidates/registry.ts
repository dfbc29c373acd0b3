/**
 * The candidate-kind registry: every kind of candidate, each a folder of its own exporting a
 * CandidateKind (core/ports/candidate_kind.ts), listed once in CANDIDATE_KINDS. Reading a
 * spec, resolving an experiment's candidates, `dvergr benchmark --help`'s candidate forms,
 * catalog_benchmark's schema and the README's candidate table all come from this list.
 *
 * A new kind: a folder adapters/candidates/<kind>/ whose kind.ts exports a CandidateKind
 * (parse, describe, resolve), and one line in CANDIDATE_KINDS.
 */
import { DvergrError } from "../../core/errors.ts";
import type { Candidate } from "../../core/bench/candidate.ts";
import { canonicalJson } from "../../core/bench/experiment.ts";
import type {
  CandidateKind,
  CandidateKindForms,
  CandidateKinds,
  CandidateRequest,
  CandidateSpec,
  Isolation,
} from "../../core/ports/candidate_kind.ts";
import { specError } from "./spec_text.ts";
import { builtinKind } from "./builtin/kind.ts";
import { commandKind } from "./command/kind.ts";
import { agentKind } from "./agent_cli/kind.ts";
import { namedKind } from "./named/kind.ts";
import { modelKind } from "./model/kind.ts";
import { importLater } from "../../core/import_later.ts";

/**
 * Every kind, in the order a spec is offered to them (the first that reads it wins; a bare
 * word is the named kind's, so it comes after the kinds with a prefix).
 */
// deno-lint-ignore no-explicit-any
export const CANDIDATE_KINDS: readonly CandidateKind<any>[] = [
  builtinKind,
  commandKind,
  agentKind,
  namedKind,
  modelKind,
];

/** The shipped kinds as the CandidateKinds port (what adapters/compose.ts wires). */
export const candidateKinds: CandidateKinds = createCandidateKinds(CANDIDATE_KINDS);

/** The CandidateKinds port over a list of kinds. */
export function createCandidateKinds(kinds: readonly CandidateKind[]): CandidateKinds {
  const byKind = new Map(kinds.map((k) => [k.kind, k]));
  const kindOf = (spec: CandidateSpec): CandidateKind => {
    const k = byKind.get(spec.kind);
    if (!k) throw new Error(`no candidate kind "${spec.kind}" is registered`);
    return k;
  };
  return {
    parse: (text) => parseSpec(kinds, text),
    model: (id) => ({ kind: "model", model: id }),
    isInlineCommand: (spec) => kindOf(spec).inlineCommand === true,
    sandboxed: (specs) => specs.some((s) => kindOf(s).sandboxed === true),
    describe: () => kinds.map(formsOf),
    resolve: (specs, req) => resolveSpecs(kindOf, specs, req),
    aliasesOf: (identity, ctx) => {
      const k = byKind.get(String(identity.kind));
      return k?.aliasesOf ? k.aliasesOf(identity, ctx) : Promise.resolve([]);
    },
  };
}

function formsOf(k: CandidateKind): CandidateKindForms {
  return { kind: k.kind, forms: k.describe(), inlineCommand: k.inlineCommand === true };
}

/** Reads one `--candidate` value with the first kind that knows its form. */
function parseSpec(kinds: readonly CandidateKind[], spec: string): CandidateSpec {
  const s = spec.trim();
  if (s === "") {
    throw specError(spec, "it is empty", "Write e.g. `builtin:reference` or `me=cmd:./agent.sh`");
  }
  for (const k of kinds) {
    const read = k.parse(s);
    if (read !== null) return read;
  }
  throw unreadSpec(kinds, s);
}

/** Why no kind reads `s`: a kind's word without its colon (`mine=cmd`), spaces, or `NAME=…`. */
function unreadSpec(kinds: readonly CandidateKind[], s: string): DvergrError {
  const word = /^[^=\s]+=([A-Za-z][\w-]*)(?=\s|$)/.exec(s)?.[1];
  const form = word === undefined
    ? undefined
    : kinds.flatMap((k) => k.describe()).find((f) => f.form.startsWith(`NAME=${word}:`));
  if (form) {
    return specError(
      s,
      `"${word}" needs a colon: ${form.form}`,
      `Write ${form.form}, e.g. \`${form.example}\``,
    );
  }
  if (/\s/.test(s)) {
    return specError(
      s,
      "it holds spaces but is not NAME=cmd:COMMAND",
      `For a command, name it: --candidate 'agent=cmd:${s}'`,
    );
  }
  const named = kinds.flatMap((k) => k.describe()).filter((f) => f.form.startsWith("NAME="));
  return specError(
    s,
    "no kind of candidate reads it",
    `After NAME= write ${named.map((f) => f.form.slice("NAME=".length)).join(" or ")}`,
  );
}

/**
 * Command candidates run unisolated only when asked for: without bubblewrap dvergr cannot
 * promise what it does with it.
 */
function unisolatedRefused(): DvergrError {
  return new DvergrError(
    "CANDIDATE_INVALID",
    "Cannot run command candidates isolated: bubblewrap is not installed or cannot build its " +
      "sandbox here",
    {
      hint: "Install bubblewrap (Debian: apt-get install bubblewrap; as root dvergr also " +
        "needs setpriv, nsenter and mount of util-linux and the right to make mount namespaces, " +
        "to start it as " +
        "the sandbox's own unprivileged uid), or set " +
        "DVERGR_ISOLATION=none to run them in their world directories knowingly. Unisolated, " +
        "they can read and write anything the user can and reach the network; bytes written " +
        "are bounded per file only; memory and processes per process only, unless dvergr " +
        "can make a cgroup here (which also ends every process at the attempt's end); " +
        "otherwise processes that leave their session can outlive the attempt",
    },
  );
}

/** Two candidates of the same model, run the same way (`--models haiku,claude-haiku-4-5`). */
function sameModel(a: Candidate, b: Candidate): boolean {
  return a.identity.kind === "model" && canonicalJson(a.identity) === canonicalJson(b.identity);
}

/** `name-2`, `name-3`…: the first that no candidate has yet. */
function freeName(name: string, taken: readonly Candidate[]): string {
  for (let n = 2;; n++) {
    const next = `${name}-${n}`;
    if (!taken.some((c) => c.name === next)) return next;
  }
}

/** Whether bubblewrap can build the sandbox here (the sandbox's module, loaded when asked). */
async function bwrapWorks(env: (name: string) => string | undefined): Promise<boolean> {
  const { detectBwrap } = await importLater<typeof import("./command/command.ts")>(
    "./command/command.ts",
    import.meta.url,
  );
  return await detectBwrap(env);
}

/**
 * The candidates of an experiment, in the order given: each spec resolved by its kind (a
 * kind may hand a spec on to another: a named candidate to its command). Names must be
 * unique, and a request with none is refused.
 */
async function resolveSpecs(
  kindOf: (spec: CandidateSpec) => CandidateKind,
  specs: CandidateSpec[],
  req: CandidateRequest,
): Promise<{ candidates: Candidate[]; isolation: Isolation }> {
  // Built-ins and models never run in the sandbox: bubblewrap is probed only for kinds that do.
  const sandboxed = specs.some((s) => kindOf(s).sandboxed === true);
  const isolation = req.isolation ?? (sandboxed && (await bwrapWorks(req.env)) ? "bwrap" : "none");
  const unisolatedAsked = req.isolation !== undefined || req.env("DVERGR_ISOLATION") === "none";
  const resolveOne = (spec: CandidateSpec, index: number): Promise<Candidate> => {
    const kind = kindOf(spec);
    if (kind.runsCommands && isolation === "none" && !unisolatedAsked) {
      return Promise.reject(unisolatedRefused());
    }
    return kind.resolve(spec, {
      ...req,
      isolation,
      index,
      resolveAs: (other) => resolveOne(other, index),
    });
  };
  const out: Candidate[] = [];
  for (const [index, spec] of specs.entries()) {
    const c = await resolveOne(spec, index);
    const same = out.find((o) => o.name === c.name);
    if (same && !sameModel(same, c)) {
      throw specError(
        c.name,
        "two candidates have this name",
        "Give each candidate its own name (NAME=cmd:…)",
      );
    }
    out.push(same ? { ...c, name: freeName(c.name, out) } : c);
  }
  if (out.length === 0) {
    throw new DvergrError("USAGE", "Cannot benchmark without candidates", {
      hint: "Add --candidate builtin:reference, --candidate NAME=cmd:COMMAND or --models m1,m2",
    });
  }
  return { candidates: out, isolation };
}
