/**
 * Fast paths for clojure.core that token-based checkers (token F1, word counts) spend most
 * of their time in, inside the Clojure sandbox. SCI calls ClojureScript's own `re-seq` and
 * `frequencies`, compiled JavaScript, but in QuickJS their per-element cost (a lazy cons and
 * a substring per match; a transient-map lookup and update per element) made up half of a
 * token-F1 verdict; and SCI interprets the expansion of `for`, a dozen calls per element.
 * The fast paths are evaluated at boot (so they lie in every snapshot) and give the same
 * values:
 *
 * - `(re-seq re s)` with a JavaScript RegExp without the g or y flag and a string: the same
 *   matches, found the way ClojureScript finds them (exec on the rest of the string after
 *   each match, one character further after an empty one), each a string or, with groups,
 *   the vector of the match array; as a seq of conses realised 64 matches at a time (the rest
 *   stays lazy, so `(first (re-seq …))` of a huge text does not find every match). Anything
 *   else goes to ClojureScript's `re-seq`.
 * - `(frequencies coll)` of a seq or vector whose elements are all strings: counted in a
 *   JavaScript Map and put into a transient map in the order each string first occurs, as
 *   ClojureScript's reduce does, so the map is the same (same entries, same type, same
 *   order). The seq is realised once (a seq re-seq made is read from the matches it holds,
 *   not walked cons by cons); when an element is not a string, ClojureScript's
 *   `frequencies` counts the realised seq.
 * - `(for [binding coll] body)`, one binding and no modifiers, expands to
 *   `(map (fn [binding] body) coll)`: the same lazy seq, realised chunk by chunk for a
 *   chunked `coll` and element by element otherwise, as `for`'s own expansion is, in about
 *   half the time (map is compiled, so only the body is interpreted per element). A body
 *   that mentions `recur` (which would target another loop), several bindings, `:let`,
 *   `:when` and `:while`, and malformed forms get `for`'s own expansion.
 * - `(reduce f init (vals m))` and `(reduce f init (keys m))` of a hash map or an array map,
 *   with `f` a function: the seq `vals`/`keys` made is remembered as standing for `m`, and
 *   reduce walks `m` with `reduce-kv` (the same values in the same order, `reduced`
 *   honoured) instead of the seq's entries one by one, ~3x faster in QuickJS. Any other
 *   reduce is ClojureScript's.
 */

/** JavaScript evaluated in QuickJS after scittle: defines `globalThis.__dvergrFastCore(C)`. */
export const FAST_CORE_JS = `(function () {
  "use strict";
  globalThis.__dvergrFastCore = function (C) {
    const RegExpType = RegExp;
    const MapType = Map;
    const max = Math.max;
    const CHUNK = 64;
    // The matches each chunk's head cons holds, and the lazy rest after them: frequencies
    // takes them as they are instead of walking the conses. The conses cannot change, so
    // the items are exactly the seq's.
    const chunks = new WeakMap();

    // The items, then the tail, as conses (as re-seq*'s, each after the first in a lazy seq
    // of ClojureScript's; here only every CHUNKth is).
    function conses(items, tail) {
      let acc = tail;
      for (let i = items.length - 1; i >= 0; i--) acc = C.cons(items[i], acc);
      chunks.set(acc, { items, tail });
      return acc;
    }

    // The elements of coll as an array: the matches of re-seq's chunks as they are, the rest
    // (anything else) as into-array finds them.
    function elements(coll) {
      const out = [];
      let cur = coll;
      for (;;) {
        const chunk = chunks.get(cur);
        if (chunk === undefined) break;
        const items = chunk.items;
        for (let i = 0; i < items.length; i++) out[out.length] = items[i];
        cur = C.seq(chunk.tail);
        if (cur === null) return out;
      }
      if (out.length === 0) return C.intoArray(coll);
      const rest = C.intoArray(cur);
      for (let i = 0; i < rest.length; i++) out[out.length] = rest[i];
      return out;
    }

    // The matches of re in s as ClojureScript's re-seq* finds them, CHUNK at a time; nil
    // when there is none.
    function matches(re, s) {
      let cur = s;
      const found = [];
      for (;;) {
        const m = re.exec(cur);
        if (m !== null) {
          found[found.length] = m.length === 1 ? m[0] : C.vec(m);
          const post = m.index + max(1, m[0].length);
          if (post <= cur.length) {
            cur = cur.substring(post);
            if (found.length < CHUNK) continue;
            const rest = cur;
            return conses(found, C.lazy(() => matches(re, rest)));
          }
        }
        return found.length === 0 ? null : conses(found, C.lazy(() => null));
      }
    }

    function reSeq(re, s) {
      if (!(re instanceof RegExpType) || re.global || re.sticky || typeof s !== "string") {
        return C.reSeq(re, s);
      }
      return matches(re, s);
    }

    function frequencies(coll) {
      if (!C.isSeq(coll) && !C.isVector(coll)) return C.frequencies(coll);
      const items = elements(coll);
      const counts = new MapType();
      for (let i = 0; i < items.length; i++) {
        const x = items[i];
        if (typeof x !== "string") return C.frequencies(coll);
        const n = counts.get(x);
        counts.set(x, n === undefined ? 1 : n + 1);
      }
      // More than 8 keys end in a hash map: ClojureScript's frequencies gets there by an
      // array map that is converted at the 9th key, its 8 keys put into an empty hash map in
      // the order they came, as here; in QuickJS the conversion costs more than the rest.
      let t = counts.size > 8 ? C.transientHashMap() : C.transientMap();
      for (const [k, n] of counts) t = C.assocBang(t, k, n);
      return C.persistentBang(t);
    }

    // The map a seq made by (vals m) or (keys m) stands for, when m is a hash map or an array
    // map: reduce over that seq walks the map with reduce-kv (the same entries in the same
    // order, nil's first) instead of the seq's entries one by one. Anything else, and a seq
    // taken further (next, rest), goes to ClojureScript's reduce.
    const mapOf = new WeakMap();
    const apply = Reflect.apply;
    const plainMap = (m) => m instanceof C.HashMap || m instanceof C.ArrayMap;
    function vals(m) {
      const v = apply(C.vals, null, arguments);
      if (arguments.length === 1 && v !== null && typeof v === "object" && plainMap(m)) {
        mapOf.set(v, { map: m, keys: false });
      }
      return v;
    }
    function keys(m) {
      const v = apply(C.keys, null, arguments);
      if (arguments.length === 1 && v !== null && typeof v === "object" && plainMap(m)) {
        mapOf.set(v, { map: m, keys: true });
      }
      return v;
    }
    function reduce(f, init, coll) {
      const of = arguments.length === 3 && typeof f === "function" && coll !== null &&
          typeof coll === "object"
        ? mapOf.get(coll)
        : undefined;
      if (of === undefined) return apply(C.reduce, null, arguments);
      return of.keys
        ? C.reduceKv(function (acc, k) { return f.call(null, acc, k); }, init, of.map)
        : C.reduceKv(function (acc, k, v) { return f.call(null, acc, v); }, init, of.map);
    }

    return { reSeq, frequencies, vals, keys, reduce };
  };
})();`;

/**
 * The Clojure half, evaluated after FAST_CORE_JS: `clojure.core/re-seq`, `frequencies`,
 * `vals`, `keys`, `reduce` and the macro `for` become the fast paths, each holding the
 * original for what it does not take.
 */
export const FAST_CORE_CLJ = `
(ns dvergr.fast-core)
(def ^:private original-re-seq re-seq)
(def ^:private original-frequencies frequencies)
(def ^:private fast
  (js/globalThis.__dvergrFastCore
    #js {:reSeq original-re-seq
         :frequencies original-frequencies
         :vec vec
         :cons cons
         :lazy (fn [f] (lazy-seq (f)))
         :isSeq seq?
         :isVector vector?
         :intoArray into-array
         :seq seq
         :transientMap (fn [] (transient {}))
         :transientHashMap (fn [] (transient (hash-map)))
         :assocBang assoc!
         :persistentBang persistent!
         :vals vals
         :keys keys
         :reduce reduce
         :reduceKv reduce-kv
         :HashMap (type (hash-map))
         :ArrayMap (type {})}))
(js-delete js/globalThis "__dvergrFastCore")
(ns-unmap 'clojure.core 're-seq)
(intern 'clojure.core 're-seq (let [f (.-reSeq fast)] (fn re-seq [re s] (f re s))))
(ns-unmap 'clojure.core 'frequencies)
(intern 'clojure.core 'frequencies (let [f (.-frequencies fast)] (fn frequencies [coll] (f coll))))
(def ^:private original-reduce reduce)
(doseq [[n f] [['vals (.-vals fast)] ['keys (.-keys fast)] ['reduce (.-reduce fast)]]]
  (ns-unmap 'clojure.core n)
  (intern 'clojure.core n f))
;; for: one binding, no modifiers, a body without recur (see the module comment).
(def ^:private original-for @#'clojure.core/for)
(defn- without-recur? [form] (not-any? #(= 'recur %) (tree-seq coll? seq form)))
(def ^:private fast-for
  (fn for [&form &env & args]
    (let [[bindings body] args]
      (if (and (= 2 (count args)) (vector? bindings) (= 2 (count bindings))
               (not (keyword? (first bindings))) (not= '& (first bindings))
               (without-recur? body))
        (list 'clojure.core/map (list 'clojure.core/fn [(first bindings)] body) (second bindings))
        (apply original-for &form &env args)))))
(ns-unmap 'clojure.core 'for)
(alter-meta! (intern 'clojure.core 'for fast-for) assoc :macro true)
(in-ns 'user)
`;
