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
  const alphabet = "ab c,Ab1-\né😀^]";
  const texts = ["", "a", "aaa", "abc abc", "   "];
  for (let i = 0; i < 60; i++) {
    const n = Math.floor(rand() * (rand() < 0.1 ? 400 : 20));
    texts.push(
      Array.from({ length: n }, () => alphabet[Math.floor(rand() * alphabet.length)]).join(""),
    );
  }
  const checker = `(ns re-diff)
    (def patterns [#"a" #"[a-z0-9]+" #"\\\\w*" #"" #"^a" #"a$" #"(a)(b)?" #"(?:ab)+" #"\\\\b\\\\w"
                   #"(?=a)" #"[^ ]+" #"\\\\s+" #"(\\\\d)|(x)" #"é+"
                   ;; What can or cannot be searched from a position (sandbox/sci_fast_core.ts).
                   #"(?<=a)b" #"(?<!a)b" #"(?<x>a)b?" #"(?i)a+" #"[\\\\]^a]+" #"\\\\^|\\\\]" #"[^]"
                   #"\\\\Bb" #"." #"a|$" #"(a)\\\\1" #"(?<=a)b|a" #"[ab]|^c" #"[]]|^b"
                   (js/RegExp. "^b|a" "m") (js/RegExp. "[a-c]+$" "m") (js/RegExp. "." "u")
                   (js/RegExp. "\\\\p{L}+" "u") (js/RegExp. "a.b" "s") (js/RegExp. "ab?" "d")
                   (js/RegExp. "A" "i") (js/RegExp. "x*" "u")])
    (defn- view [x] [(pr-str x) (some-> x type str) (count x) (some-> x first type str)
                     (some-> x rest type str) (some-> x next next type str)])
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
        ;; RegExp's getters redefined by the checker, and a pattern compiled again in place:
        ;; the fast path still finds what the original finds.
        (let [re (js/RegExp. "b")]
          (assert (= ["b" "b"] (re-seq re "abab")))
          (.compile re "^a")
          (assert (= (orig re "abab") (re-seq re "abab")) "compiled again")
          (js/Object.defineProperty (.-prototype js/RegExp) "source" #js {:get (fn [] "a")})
          (js/Object.defineProperty (.-prototype js/RegExp) "global" #js {:get (fn [] true)})
          (assert (= (orig #"b" "abab") (re-seq #"b" "abab")) "getters")
          ;; What RegExp.prototype[Symbol.match] would read (a text searched at once).
          (js/Object.defineProperty (.-prototype js/RegExp) "unicode" #js {:get (fn [] true)})
          (js/Object.defineProperty (.-prototype js/RegExp) "flags" #js {:get (fn [] "")})
          (assert (= ["" "" "" "" ""] (orig #"x*" "a😀b") (re-seq #"x*" "a😀b")) "unicode, flags")
          (assert (= (orig #"[a-z]+" "ab cd") (re-seq #"[a-z]+" "ab cd")) "flags"))
        ;; A text longer than what is searched at once.
        (let [long-text (apply str (repeat 900 "ab c, "))]
          (assert (= 1800 (count (re-seq #"[a-z]+" long-text))))
          (assert (= (orig #"[a-z]+" long-text) (re-seq #"[a-z]+" long-text)))
          (assert (= (orig #"x*" long-text) (re-seq #"x*" long-text))))
        ;; 64 at a time: the first of a long text's matches does not find them all.
        (assert (= ["a" 1000] [(first (re-seq #"a" (apply str (repeat 1000 "a"))))
                               (count (re-seq #"a" (apply str (repeat 1000 "a"))))]))
        {:checks {:same true} :reward (count rows)}))`;
  assert.match(await run(checker, { texts }), /:reward 2340[,}]/);
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

Deno.test("frequencies of many strings builds the hash map assoc! builds: the same order after dissoc, assoc, transients; full-hash collisions", async () => {
  const checker = `(ns freq-trie)
    ;; The trie itself, through the fields of its nodes (edit, bitmap or count, array).
    (def bin (type (aget (js/Object.values (hash-map :a 1)) 2)))
    (def array-node (type (aget (js/Object.values (zipmap (range 40) (range 40))) 2)))
    (defn- shape [node]
      (let [[_ n arr] (js/Object.values node)
            kind (condp = (type node) bin :bin array-node :array :other)
            used (if (= kind :bin) (take (* 2 (count (filter #(bit-test n %) (range 32)))) arr) (array-seq arr))]
        [kind n (mapv #(if (#{bin array-node} (type %)) (shape %) (some-> % pr-str)) used)]))
    (defn- view [m]
      (let [ks (keys m)]
        [(str (type m)) (pr-str m) (hash m) (count m) (mapv #(get m %) ks) (pr-str (vals m))
         (when (= (type m) (type (hash-map))) (shape (aget (js/Object.values m) 2)))
         (pr-str (reduce dissoc m (take 7 ks)))
         (pr-str (reduce dissoc m (take-nth 3 ks)))
         (pr-str (persistent! (reduce dissoc! (transient m) (take-nth 2 ks))))
         (pr-str (persistent! (reduce #(assoc! %1 (str %2 "!") 1) (transient m) (take 40 ks))))
         (pr-str (assoc m "new" 1 (first ks) 99))
         (pr-str (into m (map (fn [i] [(str "x" i) i]) (range 30))))
         (= {} (reduce dissoc m ks))
         (pr-str (reduce-kv (fn [a k v] (conj a k)) [] m))]))
    (defn- words [n seed] (map #(str "w" (mod (* (+ % seed) 7919) n) (when (odd? %) "é")) (range (* 3 n))))
    (defn check [_]
      (let [orig @#'dvergr.fast-core/original-frequencies
            colls (concat
                    (for [n [9 15 16 17 18 24 32 33 64 100 257 600 1500] seed [0 3]] (words n seed))
                    (for [n [9 17 40]] (vec (words n 1)))
                    ;; "Aa" and "BB" (and their concatenations) have the same hash.
                    [["Aa" "BB" "a" "b" "c" "d" "e" "f" "g" "h"]
                     (concat ["AaAa" "BBBB" "AaBB" "BBAa"] (words 30 2))
                     (concat (words 20 1) ["Aa"] (words 20 2) ["BB"])])
            rows (for [c colls]
                   (let [a (orig c) b (frequencies c)]
                     {:same (= (view a) (view b)) :n (count a)}))]
        (when-let [d (seq (remove :same rows))]
          (throw (ex-info "differ" {:n (count d) :first (first d)})))
        {:checks {:same true} :reward (count rows)}))`;
  assert.match(await run(checker, {}), /:reward 32[,}]/);
});

Deno.test("frequencies of what re-seq found (its matches taken as they are) counts as ClojureScript's does", async () => {
  const checker = `(ns freq-re)
    (defn check [_]
      (let [orig @#'dvergr.fast-core/original-frequencies
            texts (map #(apply str (repeat % "ab cd ab ")) [0 1 7 21 22 23 50])
            colls (concat
                    (for [t texts p [#"[a-z]+" #"a" #"(a)b" #"x"]] (re-seq p t))
                    (for [t texts] (rest (re-seq #"[a-z]+" t)))
                    (for [t texts] (cons "ab" (re-seq #"[a-z]+" t)))
                    (for [t texts] (concat (re-seq #"[a-z]+" t) [:k "ab"])))
            rows (for [c colls]
                   (let [a (orig c) b (frequencies c)]
                     {:same (and (= a b) (= (pr-str a) (pr-str b)) (= (type a) (type b)))
                      :c (pr-str c)}))]
        (when-let [d (seq (remove :same rows))]
          (throw (ex-info "differ" {:n (count d) :first (first d)})))
        (assert (= {"ab" 100 "cd" 50} (frequencies (re-seq #"[a-z]+" (nth texts 6)))))
        {:checks {:same true} :reward (count rows)}))`;
  assert.match(await run(checker, {}), /:reward 49[,}]/);
});

Deno.test("for with one binding gives what for's own expansion gives: values, types, laziness, chunks, errors", async () => {
  const checker = `(ns for-diff)
    (defmacro old-for [& args] (apply @#'dvergr.fast-core/original-for &form &env args))
    (defn- run [f]
      (let [log (atom [])
            s (try (f #(do (swap! log conj %) %)) (catch :default e [:threw (ex-message e)]))
            head (try (pr-str (take 3 s)) (catch :default e [:threw (ex-message e)]))
            seen-after-3 @log
            all (try (pr-str s) (catch :default e [:threw (ex-message e)]))]
        [(some-> s type str) head seen-after-3 all @log]))
    (def colls [nil [] [1 2 3] (vec (range 70)) '(1 2 3) {:a 1 :b 2} (zipmap (range 20) (range 20))
                #{1 2 3} (range 40) (range 5) "abc" (map inc (range 50)) (lazy-seq [1 2])
                (into-array [1 2 3]) (sorted-map 1 2 3 4)])
    (defn check [_]
      (let [rows (concat
                   (for [c colls]
                     [(run (fn [t] (for [x c] (t x))))
                      (run (fn [t] (old-for [x c] (t x))))])
                   (for [c [{:a 1 :b 2} [[1 2] [3 4]] [[1] [2 3 4]]]]
                     [(run (fn [t] (for [[k v] c] (t [v k]))))
                      (run (fn [t] (old-for [[k v] c] (t [v k]))))])
                   (for [c [[{:a 1} {:a 2 :b 3}] [nil {}]]]
                     [(run (fn [t] (for [{:keys [a b] :or {b 9} :as m} c] (t [a b m]))))
                      (run (fn [t] (old-for [{:keys [a b] :or {b 9} :as m} c] (t [a b m]))))])
                   [[(run (fn [t] (for [x [1 2 0 4]] (t (/ 8 (if (zero? x) (throw (ex-info "zero" {})) x))))))
                     (run (fn [t] (old-for [x [1 2 0 4]] (t (/ 8 (if (zero? x) (throw (ex-info "zero" {})) x))))))]
                    [(run (fn [t] (for [x 5] (t x))))
                     (run (fn [t] (old-for [x 5] (t x))))]
                    [(run (fn [t] (let [map 7 fn 8] (for [x [map fn]] (t x)))))
                     (run (fn [t] (let [map 7 fn 8] (old-for [x [map fn]] (t x)))))]])
            bad (remove (fn [[a b]] (= a b)) rows)]
        (when (seq bad) (throw (ex-info "differ" {:n (count bad) :first (first bad)})))
        ;; The simple form is the fast one; the others are for's own.
        (assert (= 'clojure.core/map (first (macroexpand '(for [x xs] x)))))
        (doseq [f ['(for [x xs y ys] x) '(for [x xs :when x] x) '(for [x xs] (recur x))
                   '(for [x xs :let [y x]] y) '(for [x] x) '(for [x xs] x y)]]
          (assert (not= 'clojure.core/map (first (try (macroexpand f) (catch :default _ nil))))
                  (pr-str f)))
        (assert (= [[1 3] [2 3]] (for [x [1 2] y [3]] [x y])))
        (assert (= [2] (for [x [1 2] :when (even? x)] x)))
        {:checks {:same true} :reward (count rows)}))`;
  assert.match(await run(checker, {}), /:reward 23[,}]/);
});

Deno.test("reduce over (vals m) or (keys m) gives what ClojureScript's reduce gives: order, nil keys, reduced, errors", async () => {
  const checker = `(ns vals-diff)
    (def orig @#'dvergr.fast-core/original-reduce)
    (def maps [{} {:a 1} {:a 1 :b 2 :c 3} (zipmap (range 8) (range 8)) (zipmap (range 9) (range 9))
               (zipmap (range 40) (map str (range 40))) (zipmap (map str (range 30)) (range 30))
               (assoc (zipmap (range 20) (range 20)) nil :nil) (assoc {:a 1} nil 2)
               (sorted-map 3 1 1 3 2 2) (dissoc (zipmap (range 20) (range 20)) 5 7)
               (into {} (map vector (range 100) (range 100)))])
    (defn- same [f]
      (let [a (try (f orig) (catch :default e [:threw (ex-message e)]))
            b (try (f reduce) (catch :default e [:threw (ex-message e)]))]
        (if (and (= a b) (= (pr-str a) (pr-str b))) 1 (throw (ex-info "differ" {:a a :b b})))))
    (defn check [_]
      (let [stop (fn [a v] (if (and (number? v) (> v 4)) (reduced [:stop a]) (conj a v)))
            boom (fn [a v] (if (= v 2) (throw (ex-info "two" {})) (conj a v)))
            n (reduce + 0
                (for [m maps
                      g [(fn [r] (r conj [] (vals m))) (fn [r] (r conj [] (keys m)))
                         (fn [r] (r stop [] (vals m))) (fn [r] (r stop [] (keys m)))
                         (fn [r] (r boom [] (vals m))) (fn [r] (r conj (vals m)))
                         (fn [r] (r conj [] (next (vals m)))) (fn [r] (r conj [] (rest (keys m))))
                         (fn [r] (let [v (vals m)] (first v) (r conj [] v)))
                         (fn [r] (r :a [] (vals m))) (fn [r] (r + 0 (filter number? (vals m))))]]
                  (same (fn [r] (g r)))))]
        {:checks {:same true} :reward n}))`;
  assert.match(await run(checker, {}), /:reward 132[,}]/);
});

Deno.test("map over a map, and reduce over it, give what ClojureScript's map and reduce give: values, order, laziness, side effects, reduced, errors", async () => {
  const checker = `(ns map-diff)
    (def omap @#'dvergr.fast-core/original-map)
    (def oreduce @#'dvergr.fast-core/original-reduce)
    (def maps [{} {:a 1} {:a 1 :b 2 :c 3} (zipmap (range 8) (range 8)) (zipmap (range 9) (range 9))
               (zipmap (map str (range 40)) (range 40)) (assoc (zipmap (range 20) (range 20)) nil :nil)
               (assoc {:a 1} nil 2) (sorted-map 3 1 1 3) (into {} (map vector (range 100) (range 100)))
               [1 2 3] nil])
    ;; Each scenario gets map and reduce (the originals or clojure.core's) and a logging g.
    (def scenarios
      [(fn [mp rd m g] (doall (mp g m)))
       (fn [mp rd m g] (rd + 0 (mp (fn [e] (g (if (map-entry? e) (val e) e))) m)))
       (fn [mp rd m g] (let [s (mp g m)] [(first s) (rd conj [] s) (vec s)]))
       (fn [mp rd m g] (let [s (mp g m)] [(rd conj [] s) (vec s) (rd conj [] s)]))
       (fn [mp rd m g] (let [s (mp g m)]
                         [(rd (fn [a x] (if (> (count a) 2) (reduced [:stop a]) (conj a x))) [] s)
                          (vec s)]))
       (fn [mp rd m g] (let [n (atom 0)
                             s (mp (fn [e] (when (= 3 (swap! n inc)) (throw (ex-info "third" {}))) (g e)) m)]
                         [(try (rd conj [] s) (catch :default e (ex-message e)))
                          (try (vec s) (catch :default e (ex-message e))) @n]))
       (fn [mp rd m g] (let [s (mp g m)] [(type s) (type (rest s)) (type (seq s)) (count s) (pr-str s)]))
       (fn [mp rd m g] (rd :a [] (mp g m)))
       (fn [mp rd m g] (rd conj (mp g m)))
       (fn [mp rd m g] (doall (mp (fn [a b] [a b]) m m)))
       (fn [mp rd m g] (into [] (mp g) m))
       (fn [mp rd m g] (doall (mp :a m)))
       (fn [mp rd m g] (let [s (mp g m)] (doall (take 2 s)) (rd conj [] s)))])
    (defn- run [mp rd m f]
      (let [log (atom [])
            g (fn [x] (swap! log conj x) [:g x])
            out (try (f mp rd m g) (catch :default e [:threw (ex-message e)]))]
        [(pr-str out) @log]))
    (defn check [_]
      (let [rows (for [m maps f scenarios]
                   (let [a (run omap oreduce m f) b (run map reduce m f)]
                     {:same (= a b) :m (pr-str m) :a a :b b}))]
        (when-let [d (seq (remove :same rows))]
          (throw (ex-info "differ" {:n (count d) :first (first d)})))
        ;; Laziness: taking the first entry makes one.
        (let [n (atom 0)] (first (map #(do (swap! n inc) %) {:a 1 :b 2})) (assert (= 1 @n)))
        {:checks {:same true} :reward (count rows)}))`;
  assert.match(await run(checker, {}), /:reward 156[,}]/);
});

Deno.test("get of a map frequencies made gives what ClojureScript's get gives: present, absent, not-found, keys of other kinds", async () => {
  const checker = `(ns get-diff)
    (def oget @#'dvergr.fast-core/original-get)
    (defn check [_]
      (let [maps (concat (for [n [0 1 5 8 9 20 100]] (frequencies (map #(str "w" (mod % n)) (range (* 2 n)))))
                         [(frequencies (re-seq #"[a-z]+" "a b a c")) (frequencies [1 2 1]) (frequencies [nil "a"])
                          (frequencies [:a "a"]) (assoc (frequencies ["a" "b"]) "c" 3)
                          (with-meta (frequencies ["a"]) {:m 1}) nil {"a" 1} "abc" [1 2]])
            ks ["w0" "w1" "w7" "w99" "w100" "a" "b" "c" "" nil 1 :a 'a "1" 0]
            rows (for [m maps k ks
                       f [(fn [g] (g m k)) (fn [g] (g m k :none)) (fn [g] (g m k nil))]]
                   (let [a (try (f oget) (catch :default e [:threw (ex-message e)]))
                         b (try (f get) (catch :default e [:threw (ex-message e)]))]
                     {:same (and (= a b) (= (pr-str a) (pr-str b)) (= (identical? nil a) (identical? nil b)))
                      :m (pr-str m) :k k :a a :b b}))]
        (when-let [d (seq (remove :same rows))]
          (throw (ex-info "differ" {:n (count d) :first (first d)})))
        (assert (= [2 1 nil :x] [(get (frequencies ["a" "a" "b"]) "a") (get (frequencies ["a" "a" "b"]) "b")
                                 (get (frequencies ["a"]) "z") (get (frequencies ["a"]) "z" :x)]))
        {:checks {:same true} :reward (count rows)}))`;
  assert.match(await run(checker, {}), /:reward 765[,}]/);
});
