/**
 * Model candidates as a kind: a model id or alias of the registry (`--models a,b`, or a bare
 * NAME that candidates.edn does not have), run by dvergr's own agent loop on the host.
 */
import type { CandidateKind } from "../../../core/ports/candidate_kind.ts";
import type { Candidate } from "../../../core/bench/candidate.ts";
import { DvergrError } from "../../../core/errors.ts";
import { importLater } from "../../../core/import_later.ts";

/** A model candidate's spec: the model id or alias. */
export interface ModelSpec {
  kind: "model";
  model: string;
}

/** The model candidates' module (loaded when first needed: builds without it still run). */
async function modelModule(model: string): Promise<typeof import("./model_candidate.ts")> {
  try {
    return await importLater<typeof import("./model_candidate.ts")>(
      "./model_candidate.ts",
      import.meta.url,
    );
  } catch (e) {
    throw new DvergrError(
      "CANDIDATE_INVALID",
      `Cannot use model "${model}": model candidates are not available in this build (${
        e instanceof Error ? e.message : String(e)
      })`,
      { hint: "Use builtin:… or NAME=cmd:COMMAND candidates" },
    );
  }
}

/** The registry's model candidate. */
async function registryModel(
  model: string,
  opts: { env: (name: string) => string | undefined; homeDir?: string },
): Promise<Candidate> {
  const mod = await modelModule(model);
  return await mod.createModelCandidate(model, { env: opts.env, homeDir: opts.homeDir });
}

export const modelKind: CandidateKind<ModelSpec> = {
  kind: "model",
  // A bare word is read by the named kind first: a model unless candidates.edn names it.
  parse: () => null,
  describe: () => [{
    form: "MODEL",
    what: "a model id or alias of the model registry (or --models M1,M2)",
    example: "claude-haiku-4-5",
  }],
  resolve: (spec, ctx) =>
    ctx.createModel ? ctx.createModel(spec.model, ctx.index) : registryModel(spec.model, ctx),
  async aliasesOf(identity, ctx) {
    if (typeof identity.model !== "string") return [];
    return (await modelModule(identity.model)).modelAliases(identity.model, ctx);
  },
};
