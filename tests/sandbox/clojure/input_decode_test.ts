import assert from "node:assert/strict";
import { bootSci } from "../engines.ts";

/** Random tagged JSON (core/edn/tagged.ts), with the keys where keyword and array-map differ. */
function generator(seed: number) {
  let x = seed;
  const rand = () => (x = (x * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
  const pick = <T>(xs: T[]): T => xs[Math.floor(rand() * xs.length)];
  const keys: unknown[] = [
    ["k", null, "a"],
    ["k", null, "b"],
    ["k", null, "a/b"],
    ["k", "a", "b"],
    ["k", null, "/"],
    ["k", null, "a/b/c"],
    ["k", null, ""],
    ["k", "x.y", "z?"],
    ["k", null, "é"],
    "a",
    "a/b",
    "",
    "true",
    1,
    -0,
    0,
    2.5,
    true,
    false,
    null,
    ["v", 1],
    ["y", null, "s"],
  ];
  const scalar = () => pick([...keys, "text", 7, ["k", null, "v"]]);
  const form = (depth: number): unknown => {
    if (depth <= 0 || rand() < 0.3) return scalar();
    const kind = pick(["m", "m", "m", "v", "l", "s"]);
    const n = Math.floor(rand() * (rand() < 0.2 ? 12 : 6));
    const items: unknown[] = [kind];
    for (let i = 0; i < n; i++) {
      if (kind === "m") items.push(pick(keys), form(depth - 1));
      else if (kind === "s") items.push(`e${i}`);
      else items.push(form(depth - 1));
    }
    return items;
  };
  return form;
}

Deno.test("the checker's input decodes as keyword and array-map make it: keys, namespaces, duplicates, types", async () => {
  const form = generator(11);
  const values = Array.from({ length: 300 }, () => form(3));
  const checker = `(ns decode-diff)
    ;; The glue's decoding before its fast paths: keyword, array-map and hash-map themselves.
    (defn- old-decode [x]
      (if (array? x)
        (let [items (mapv old-decode (rest (array-seq x)))]
          (case (aget x 0)
            "k" (if (nil? (aget x 1)) (keyword (aget x 2)) (keyword (aget x 1) (aget x 2)))
            "y" (if (nil? (aget x 1)) (symbol (aget x 2)) (symbol (aget x 1) (aget x 2)))
            "v" (vec items)
            "l" (apply list items)
            "s" (set items)
            "m" (if (<= (alength x) 17) (apply array-map items) (apply hash-map items))))
        x))
    (defn- view [v]
      (mapv (fn [x] [(str (type x)) (pr-str x) (hash x)
                     (when (keyword? x) [(namespace x) (name x)])])
            (tree-seq coll? seq v)))
    (defn check [{:keys [params]}]
      (let [olds (map old-decode (js/JSON.parse (get params "json")))
            rows (map (fn [a b] {:same (and (= a b) (= (view a) (view b))) :a (pr-str a) :b (pr-str b)})
                      olds (get params "values"))]
        (when-let [d (seq (remove :same rows))]
          (throw (ex-info "differ" {:n (count d) :first (first d)})))
        {:checks {:same true} :reward (count rows)}))`;
  const { engine } = await bootSci(256 * 1024);
  const input = [
    "m",
    ["k", null, "params"],
    ["m", "values", ["v", ...values], "json", JSON.stringify(values)],
  ];
  const r = engine.call({
    fn: "check",
    key: "decode-diff",
    source: checker,
    input: JSON.stringify(input),
    timeoutMs: 120_000,
  });
  assert.equal(r.outcome.ok, true, JSON.stringify(r.outcome));
  assert.match(r.outcome.ok ? r.outcome.edn : "", /:reward 300[,}]/);
});
