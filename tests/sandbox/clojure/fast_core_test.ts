import assert from "node:assert/strict";
import { bootSci } from "../engines.ts";
import { toTagged } from "../../../core/edn/tagged.ts";

/** Calls `check` of `source` (whose reward is 1 when all is well) with `params`. */
async function run(source: string, params: unknown): Promise<string> {
  const { engine } = await bootSci(256 * 1024);
  const r = engine.call({
    fn: "check",
    key: "k",
    source,
    input: JSON.stringify(["m", ["k", null, "params"], toTagged(params)]),
    timeoutMs: 120_000,
  });
  assert.equal(r.outcome.ok, true, JSON.stringify(r.outcome));
  return r.outcome.ok ? r.outcome.edn : "";
}

Deno.test("re-seq finds what ClojureScript's re-seq finds: the same matches, groups, empty matches, anchors and types", async () => {
  let x = 7;
  const rand = () => (x = (x * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
  const alphabet = "ab c,Ab1-\né";
  const texts = ["", "a", "aaa", "abc abc", "   "];
  for (let i = 0; i < 60; i++) {
    const n = Math.floor(rand() * (rand() < 0.1 ? 400 : 20));
    texts.push(
      Array.from({ length: n }, () => alphabet[Math.floor(rand() * alphabet.length)]).join(""),
    );
  }
  const checker = `(ns re-diff)
    (def patterns [#"a" #"[a-z0-9]+" #"\\\\w*" #"" #"^a" #"a$" #"(a)(b)?" #"(?:ab)+" #"\\\\b\\\\w"
                   #"(?=a)" #"[^ ]+" #"\\\\s+" #"(\\\\d)|(x)" #"é+"])
    (defn- view [x] [(pr-str x) (some-> x type str) (count x) (some-> x first type str)])
    (defn check [{:keys [params]}]
      (let [orig @#'dvergr.fast-core/original-re-seq
            rows (for [p patterns s (get params "texts")]
                   (let [a (orig p s) b (re-seq p s)]
                     {:same (and (= a b) (= (view a) (view b))) :p (str p) :s s}))]
        (when-let [d (seq (remove :same rows))]
          (throw (ex-info "differ" {:n (count d) :first (first d)})))
        ;; What is not a plain regex and a string goes to the original, errors included.
        (let [g (js/RegExp. "a" "g")]
          (assert (= (orig g "aXa") (re-seq g "aXa"))))
        (assert (= (try (orig "a" "a") (catch :default e (ex-message e)))
                   (try (re-seq "a" "a") (catch :default e (ex-message e)))))
        (assert (= (try (orig #"a" 1) (catch :default e (ex-message e)))
                   (try (re-seq #"a" 1) (catch :default e (ex-message e)))))
        ;; 64 at a time: the first of a long text's matches does not find them all.
        (assert (= ["a" 1000] [(first (re-seq #"a" (apply str (repeat 1000 "a"))))
                               (count (re-seq #"a" (apply str (repeat 1000 "a"))))]))
        {:checks {:same true} :reward (count rows)}))`;
  assert.match(await run(checker, { texts }), /:reward 910[,}]/);
});

Deno.test("frequencies counts as ClojureScript's does: the same map, type and order, strings or not", async () => {
  const checker = `(ns freq-diff)
    (defn- words [n seed]
      (map #(str "w" (mod (* (+ % seed) 7919) (inc (quot n 3)))) (range n)))
    (defn check [_]
      (let [orig @#'dvergr.fast-core/original-frequencies
            colls (concat
                    (for [n [0 1 2 7 8 9 16 40 200] seed [1 5]] (words n seed))
                    (for [n [0 3 9 40]] (vec (words n 3)))
                    [(list "a" "b" "a") ["a" :a "a"] [1 1.0 2] (map inc [1 2 1]) nil "abca"
                     #{"a" "b"} {"a" 1} (range 20) [nil nil "a"] (lazy-seq ["x" "y" "x"])])
            rows (for [c colls]
                   (let [a (orig c) b (frequencies c)]
                     {:same (and (= a b) (= (pr-str a) (pr-str b)) (= (type a) (type b)))
                      :c (pr-str c)}))]
        (when-let [d (seq (remove :same rows))]
          (throw (ex-info "differ" {:n (count d) :first (first d)})))
        ;; A lazy seq is realised once, its side effects too.
        (let [n (atom 0)]
          (frequencies (map #(do (swap! n inc) %) ["a" 1 "a"]))
          (assert (= 3 @n)))
        {:checks {:same true} :reward (count rows)}))`;
  assert.match(await run(checker, {}), /:reward 33[,}]/);
});
