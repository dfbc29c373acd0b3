/**
 * Validation of what a Clojure checker returns, on the host: the `pr-str` text of its
 * result is read with dvergr's EDN reader and then validated exactly like checker.js
 * results (sandbox/verdict.ts), after one Clojure-only rule: check names are keywords.
 */
import { DvergrError } from "../core/errors.ts";
import { readEdn } from "../core/edn/read.ts";
import { toPlain } from "../core/edn/plain.ts";
import { isEdnMap, Keyword, mapGet } from "../core/edn/values.ts";
import type { EdnValue } from "../core/edn/values.ts";
import type { GeneratedWorld, JudgeRequest, Verdict } from "../core/checker.ts";
import { toTagged } from "../core/edn/tagged.ts";
import { readGenerated, readJudgeRequests, readVerdict, type Validated } from "./verdict.ts";

/** Reads `{:checks {kw bool} :reward n}` from the EDN a Clojure checker's `check` printed. */
export function readClojureVerdict(edn: string): Validated<Verdict> {
  const v = read(edn, "The checker returned no verdict");
  if (!v.ok) return v;
  if (isEdnMap(v.value)) {
    // What the sandbox prints instead of a verdict whose check name EDN cannot carry.
    const unprintable = mapGet(v.value, "dvergr-unprintable-check");
    if (typeof unprintable === "string") {
      return {
        ok: false,
        message: "The checker returned no verdict: checks: checker.clj named a check " +
          `(keyword ${shortEdn(unprintable)}), which is no EDN keyword (a space, a delimiter or ` +
          "a character EDN cannot read back would make it other checks): use names such as :ok?",
      };
    }
    const checks = mapGet(v.value, "checks");
    if (isEdnMap(checks)) {
      for (const k of checks.keys()) {
        if (!(k instanceof Keyword)) {
          return {
            ok: false,
            message:
              `The checker returned no verdict: checks: expected keyword names such as :ok?, got ${
                shortEdn(k)
              }`,
          };
        }
      }
    }
  }
  return readVerdict(JSON.stringify(toPlain(v.value)));
}

/** Reads `[{:id "…" :prompt "…"} …]` (nil: none) from what `judge-requests` printed. */
export function readClojureJudgeRequests(edn: string): Validated<JudgeRequest[]> {
  const v = read(edn, "judge-requests returned no requests");
  if (!v.ok) return v;
  return readJudgeRequests(JSON.stringify(toPlain(v.value)));
}

/**
 * Reads `{:files {"/docs/a.md" "text"} :gold …}` from what generator.clj's `generate`
 * printed: validated as generator.js's world is (sandbox/verdict.ts), and the gold also kept
 * as EDN (keywords, sets), which a checker.clj gets as it was.
 */
export function readClojureWorld(edn: string): Validated<GeneratedWorld> {
  const no = "generator.clj's generate returned no world";
  const v = read(edn, no, "generator.clj's result");
  if (!v.ok) return v;
  if (!isEdnMap(v.value)) {
    return {
      ok: false,
      message: `${no}: expected a map {:files {…} :gold …}, got ${shortEdn(v.value)}`,
    };
  }
  const gold = mapGet(v.value, "gold");
  const files = mapGet(v.value, "files");
  const plain = {
    ...(files !== undefined ? { files: toPlain(files) } : {}),
    ...(gold !== undefined ? { gold: toPlain(gold) } : {}),
  };
  const world = readGenerated(JSON.stringify(plain), "generator.clj");
  if (!world.ok) return world;
  return { ok: true, value: { ...world.value, goldEdn: toTagged(gold) } };
}

function read(edn: string, what: string, file = "checker.clj's result"): Validated<EdnValue> {
  try {
    return { ok: true, value: readEdn(edn, { file }) };
  } catch (e) {
    if (e instanceof DvergrError && e.code === "EDN_SYNTAX") {
      return {
        ok: false,
        message: `${what}: it is not EDN data (${e.message}): ${
          edn.length > 80 ? edn.slice(0, 77) + "…" : edn
        }`,
      };
    }
    throw e;
  }
}

function shortEdn(k: EdnValue): string {
  const s = typeof k === "string" ? JSON.stringify(k) : String(k);
  return s.length > 40 ? s.slice(0, 37) + "…" : s;
}
