/** The built-in candidates as a kind: `builtin:reference`, `builtin:noop`. */
import type { CandidateKind } from "../../../core/ports/candidate_kind.ts";
import { specError } from "../spec_text.ts";
import { BUILTIN_NAMES, builtinCandidate, type BuiltinName } from "./builtin.ts";

/** A built-in candidate's spec: which one, and its name (the spec itself). */
export interface BuiltinSpec {
  kind: "builtin";
  builtin: BuiltinName;
  name: string;
}

export const builtinKind: CandidateKind<BuiltinSpec> = {
  kind: "builtin",
  parse(text) {
    if (!text.startsWith("builtin:")) return null;
    const which = text.slice("builtin:".length);
    if (!(BUILTIN_NAMES as readonly string[]).includes(which)) {
      throw specError(
        text,
        `there is no builtin "${which}"`,
        `The builtins are ${BUILTIN_NAMES.map((b) => `builtin:${b}`).join(", ")}`,
      );
    }
    return { kind: "builtin", builtin: which as BuiltinName, name: text };
  },
  describe: () => [
    {
      form: "builtin:reference",
      what: "writes the calibration reference",
      example: "builtin:reference",
    },
    { form: "builtin:noop", what: "writes nothing", example: "builtin:noop" },
  ],
  resolve: (spec, ctx) => Promise.resolve(builtinCandidate(spec.builtin, ctx.bundle, spec.name)),
};
