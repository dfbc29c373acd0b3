import assert from "node:assert/strict";
import { clojureWarnings } from "../../../core/bundle/clojure_lint.ts";

Deno.test("clojureWarnings() flags Java-only regex syntax and (.length s), with line and column", () => {
  const src = [
    "(ns w)",
    '(def letters #"\\p{L}+")',
    '(defn whole [s] (re-find #"\\Aab\\z" s))',
    '(def poss #"a++b{2}+")',
    "(defn n [s] (.length s))",
  ].join("\n");
  const ws = clojureWarnings(src);
  const first = (m: string) => m.startsWith("(") ? m.split(":")[0] : m.split(":")[1].trim();
  assert.deepEqual(ws.map((w) => [w.line, w.column, first(w.message)]), [
    [2, 14, "\\p{L} is a Java Unicode class"],
    [3, 26, "\\A is a Java anchor"],
    [3, 26, "\\z is a Java anchor"],
    [4, 11, "++ is a Java possessive quantifier"],
    [4, 11, "{2}+ is a Java possessive quantifier"],
    [5, 13, "(.length s) calls a method that JavaScript strings do not have"],
  ]);
});

Deno.test("clojureWarnings() ignores strings, comments, escaped backslashes and ordinary regexes", () => {
  const src = [
    '(def s "\\\\p{L} \\\\A (.length s)")',
    ';; #"\\p{L}" (.length s)',
    '(def ok #"a\\\\p{b}\\\\z[+]+\\++")',
    '(def fine #"^[A-Za-z]+$")',
    '(def c \\")',
    "(.-length s)",
  ].join("\n");
  assert.deepEqual(clojureWarnings(src), []);
});
