import assert from "node:assert/strict";
import { bootSci } from "../engines.ts";
import { toTagged } from "../../../core/edn/tagged.ts";

/** A seeded generator of EDN texts: mostly inside the fast reader's subset, some outside. */
function generator(seed: number) {
  let x = seed;
  const rand = () => (x = (x * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
  const pick = <T>(xs: T[]): T => xs[Math.floor(rand() * xs.length)];
  const ws = () => pick(["", " ", "  ", ",", " , ", "\n", "\t", "\r\n "]);
  const sep = () => pick([" ", ", ", "\n", ",", "\t"]);
  const scalars: (() => string)[] = [
    () =>
      pick(["0", "-0", "7", "-12", "123456789012345", "1234567890123456", "3.25", "-0.5", "1.0"]),
    () => pick(["1e5", "2.5e-3", "1.5E+2", "017", "0x1F", "1/2", "+3", "1.", "1N", "2M"]),
    () =>
      pick([
        ":a",
        ":b",
        ":ns/k",
        ":a.b/c-d",
        ":x?",
        ":<=>",
        ":a1",
        ":1",
        "::a",
        ":a/",
        ":-x",
        ":a:b",
      ]),
    () =>
      JSON.stringify(pick(["", "x", "Governing Law", 'q"uote', "back\\slash", "tab\tnl\n"]))
        .replace(/\\u00([0-9a-f]{2})/g, "\\u00$1"),
    () => pick(['"\\u00e9t\\u00C9"', '"\\b\\f"', '"\\x"', '"\\101"', '"\\u12"', '"unterminated']),
    () => pick(["nil", "true", "false", "sym", "ns/sym", "-", "+", "\\a", '#inst "2020-01-01"']),
    () => pick(['#uuid "00000000-0000-0000-0000-000000000000"', "#_1 2", "^:m [1]", "; c\n1"]),
  ];
  const scalar = (outside: boolean): string => {
    if (outside) return pick(scalars)();
    return pick([scalars[0], scalars[2], scalars[3], scalars[5]])().replace(
      /^(1234567890123456|sym|ns\/sym|-|\+|\\a|#inst.*|::a|:a\/|:-x|:a:b|:1)$/,
      ":ok",
    );
  };
  const form = (depth: number, outside: boolean): string => {
    if (depth <= 0 || rand() < 0.35) return scalar(outside && rand() < 0.1);
    const n = Math.floor(rand() * (rand() < 0.2 ? 14 : 5));
    const kind = pick(["v", "l", "m", "s"]);
    const items: string[] = [];
    for (let i = 0; i < n; i++) {
      if (kind === "m") {
        const key = rand() < 0.8 ? scalar(false) : form(depth - 1, outside);
        items.push(key + sep() + form(depth - 1, outside));
      } else {
        items.push(kind === "s" && rand() < 0.8 ? scalar(false) : form(depth - 1, outside));
      }
    }
    const body = ws() + items.join(sep()) + ws();
    if (kind === "v") return `[${body}]`;
    if (kind === "l") return `(${body})`;
    if (kind === "m") return `{${body}}`;
    return `#{${body}}`;
  };
  return { form, rand, pick, ws };
}

Deno.test("clojure.edn/read-string reads as SCI's own reader did: same values, types, order and errors", async () => {
  const g = generator(42);
  const texts: string[] = [
    "",
    "   ",
    " ,, ",
    "1 2",
    "{:a 1} }}",
    "1:2",
    "[1 2",
    "{:a}",
    "{:a 1 :a 2}",
  ];
  texts.push("#{1 1}", "{1 :x 1.0 :y}", '{"a" 1 "a" 2}', "[1 2]]", ")", "(", "-", "-5x");
  for (let i = 0; i < 400; i++) {
    const outside = g.rand() < 0.3;
    let t = g.ws() + g.form(4, outside) + g.ws();
    if (outside && g.rand() < 0.2) t = t.slice(0, Math.floor(g.rand() * t.length));
    texts.push(t);
  }
  const checker = `(ns edn-diff (:require [clojure.edn :as edn]))
    (defn- outcome [f s]
      (try (let [v (f s)]
             [:ok (pr-str v) (mapv #(str (type %)) (tree-seq coll? seq v)) v])
           (catch :default e [:error (ex-message e)])))
    (defn check [{:keys [params]}]
      (let [orig @#'dvergr.fast-edn/original
            fast @#'dvergr.fast-edn/read-fast
            fallback @#'dvergr.fast-edn/fallback
            rows (for [s (get params "texts")]
                   (let [a (outcome orig s) b (outcome edn/read-string s)]
                     {:same (and (= (pop a) (pop b)) (or (= :error (first a)) (= (peek a) (peek b))))
                      :fast (not (identical? fallback (fast s)))
                      :text s :a (pr-str (pop a)) :b (pr-str (pop b))}))]
        (when-let [d (seq (remove :same rows))]
          (throw (ex-info "differ" {:n (count d) :first (first d)})))
        {:checks {:same true} :reward (/ (count (filter :fast rows)) (count rows))}))`;
  const { engine } = await bootSci(256 * 1024);
  const input = ["m", ["k", null, "params"], toTagged({ texts })];
  const r = engine.call({
    fn: "check",
    key: "edn-diff",
    source: checker,
    input: JSON.stringify(input),
    timeoutMs: 120_000,
  });
  assert.equal(r.outcome.ok, true, JSON.stringify(r.outcome));
  // The reward is the share of texts the fast reader read itself (the rest fell back).
  const share = Number(/:reward ([0-9.]+)/.exec(r.outcome.ok ? r.outcome.edn : "")?.[1]);
  assert.ok(share > 0.5 && share < 0.95, `fast share ${share}`);
});
