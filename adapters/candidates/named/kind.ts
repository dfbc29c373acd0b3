/**
 * Named candidates as a kind: `cmd:NAME`, or a bare `NAME`, a command or agent CLI of the
 * home's candidates.edn (or one given by the caller, e.g. the demo's agents). A bare NAME the
 * home does not have is a model id. A named candidate resolves as the command or agent
 * spec it stands for.
 */
import type {
  CandidateContext,
  CandidateKind,
  CandidateSpec,
} from "../../../core/ports/candidate_kind.ts";
import { NAME, specError } from "../spec_text.ts";
import { type NamedCandidate, readNamedCommands } from "./candidates_file.ts";

/** A named candidate's spec: `explicit` when written `cmd:NAME`. */
export interface NamedSpec {
  kind: "named";
  name: string;
  explicit: boolean;
}

/** The home's named candidates and the caller's (these win). */
async function namedCandidates(ctx: CandidateContext): Promise<Map<string, NamedCandidate>> {
  const named = ctx.candidatesFile
    ? await readNamedCommands(ctx.candidatesFile)
    : new Map<string, NamedCandidate>();
  for (const [k, v] of ctx.named ?? []) named.set(k, v);
  return named;
}

/** The spec a named candidate stands for: an agent CLI (it has `cli`) or a command. */
function specOf(named: NamedCandidate): CandidateSpec {
  // A named command has its own mounts only, never the inline commands' --mount.
  return "cli" in named
    ? { kind: "agent", ...named }
    : { kind: "command", ...named, mounts: named.mounts ?? [] };
}

export const namedKind: CandidateKind<NamedSpec> = {
  kind: "named",
  // A named candidate may be a command or an agent CLI.
  sandboxed: true,
  parse(text) {
    if (text.startsWith("cmd:")) {
      const name = text.slice("cmd:".length);
      if (!NAME.test(name)) {
        throw specError(
          text,
          `"${name}" is not the name of a configured command`,
          "Use cmd:NAME for a command of candidates.edn in the home, or NAME=cmd:COMMAND inline",
        );
      }
      return { kind: "named", name, explicit: true };
    }
    // Anything with spaces or `NAME=` is some other kind's, or a mistake the registry names.
    if (/\s/.test(text) || /^[^=]+=/.test(text)) return null;
    return { kind: "named", name: text, explicit: false };
  },
  describe: () => [{
    form: "cmd:NAME, NAME",
    what: "a command or agent CLI of the home's candidates.edn (a bare NAME it lacks is a model)",
    example: "cmd:mine",
  }],
  async resolve(spec, ctx) {
    const named = await namedCandidates(ctx);
    const found = named.get(spec.name);
    if (found) return await ctx.resolveAs(specOf(found));
    if (!spec.explicit) return await ctx.resolveAs({ kind: "model", model: spec.name });
    const known = [...named.keys()];
    throw specError(
      `cmd:${spec.name}`,
      "the home's candidates.edn has no such command",
      known.length
        ? `Known commands: ${known.join(", ")}`
        : 'Add it to candidates.edn in the home: {"NAME" {:command "…"}}',
    );
  },
};
