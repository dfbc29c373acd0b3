/**
 * checker.clj through the checker pool, end to end: Clojure bundles written for these
 * tests (datasets, fetched pages, judgements, every fault kind, isolation between calls,
 * escapes), each graded the way calibrate, check and benchmark grade them.
 */
import assert from "node:assert/strict";
import { parseBundle } from "../../../core/bundle/parse.ts";
import { checkerInputFor } from "../../../core/bundle/checker_input.ts";
import type { AnswerFacts } from "../../../core/bundle/clojure_input.ts";
import type { Bundle } from "../../../core/bundle/types.ts";
import { calibrate } from "../../../core/calibrate/calibrate.ts";
import type { CheckerRun, JudgeRequestsRun } from "../../../core/checker.ts";
import { createCheckerPool } from "../../../sandbox/checker_pool.ts";

/**
 * One pool for the file, with one Clojure worker, so every call meets the state the
 * previous one left (SCI boots once: 0.4–2 s). Its worker outlives each test, hence the
 * sanitizers are off and the pool closes when the module unloads.
 */
const pool = createCheckerPool({ workers: 1 });
globalThis.addEventListener("unload", () => pool.close());
const opts = { sanitizeOps: false, sanitizeResources: false };

function bundle(checker: string, extra: Record<string, string> = {}): Bundle {
  return parseBundle({
    name: "clj",
    files: new Map([
      ["workflow.edn", '{:title "C" :task "Do it." :params {:fields #{:a :b} :limit 2}}'],
      ["checker.clj", checker],
      ["fixtures/docs/a.md", "x"],
      ...Object.entries(extra),
    ]),
  });
}

async function check(b: Bundle, answer: Partial<AnswerFacts> = {}, timeoutMs?: number) {
  return await pool.check(
    b.checker,
    checkerInputFor(b, { files: {}, ...answer }),
    timeoutMs ? { timeoutMs } : undefined,
  );
}

function verdict(run: CheckerRun) {
  assert.ok(run.ok, run.ok ? "" : `${run.fault}: ${run.message}`);
  return run.verdict;
}

function faultOf(run: CheckerRun | JudgeRequestsRun) {
  assert.equal(run.ok, false, JSON.stringify(run));
  return run as { fault: string; message: string };
}

Deno.test(
  "checker.clj gets gold and params as Clojure data: keywords, sets, vectors, #inst",
  opts,
  async () => {
    const b = bundle(
      `(ns data.checker)
(defn check [{:keys [files params gold fetched judgements]}]
  {:checks {:kw-keys (= :eur (:currency gold))
            :set (and (set? (:tags gold)) (contains? (:tags gold) :urgent))
            :vector (and (vector? (:lines gold)) (= 2 (count (:lines gold))))
            :inst (and (inst? (:due gold)) (= 2026 (.getUTCFullYear (:due gold))))
            :string-keys (= "7" (get-in gold [:by-id "a"]))
            :params (and (= #{:a :b} (:fields params)) (= 2 (:limit params)))
            :run-param (= "late" (:mode params))
            :files (= "{:a 1}" (get files "/out/answer.edn"))
            :empty-maps (and (= {} fetched) (= {} judgements))}
   :reward 1})`,
      {
        "gold.edn":
          '{:currency :eur :tags #{:urgent :paid} :lines [1 2] :due #inst "2026-03-01T00:00:00Z" :by-id {"a" "7"}}',
      },
    );
    const v = verdict(
      await check(b, { files: { "/out/answer.edn": "{:a 1}" }, params: { mode: "late" } }),
    );
    assert.deepEqual(Object.entries(v.checks).filter(([, ok]) => !ok), []);
    assert.equal(v.reward, 1);
  },
);

Deno.test("checker.clj over a dataset: each case's gold, else the bundle's", opts, async () => {
  const b = bundle(
    `(ns cases.checker (:require [clojure.edn :as edn]))
(defn check [{:keys [files gold]}]
  (let [a (some-> (get files "/out/answer.edn") edn/read-string)]
    {:checks {:right (= (:account a) (:account gold))} :reward (if (= (:account a) (:account gold)) 1 0)}))`,
    {
      "gold.edn": "{:account 4400}",
      "cases/one/gold.edn": "{:account 6815}",
      "cases/one/fixtures/docs/case.edn": "{}",
      "cases/two/fixtures/docs/case.edn": "{}",
    },
  );
  const answer = { "/out/answer.edn": "{:account 6815}" };
  assert.equal(verdict(await check(b, { files: answer, caseId: "one" })).checks.right, true);
  assert.equal(verdict(await check(b, { files: answer, caseId: "two" })).checks.right, false);
  assert.equal(
    verdict(await check(b, { files: { "/out/answer.edn": "{:account 4400}" }, caseId: "two" }))
      .checks.right,
    true,
  );
});

const JUDGED = `(ns judged.checker (:require [clojure.string :as str]))
(defn- entries [files] (remove str/blank? (str/split-lines (get files "/out/list.md" ""))))
(defn judge-requests [{:keys [files fetched] :as input}]
  (for [e (entries files)]
    {:id (str/lower-case e)
     :prompt (str "Is " e " a competitor? Page: " (get fetched (str "https://" e ".example") "none"))
     :has-judgements (contains? input :judgements)}))
(defn check [{:keys [files fetched judgements]}]
  (let [es (entries files)
        relevant (filter #(str/starts-with? (str/lower-case (get judgements (str/lower-case %) "")) "yes") es)
        grounded (filter #(contains? fetched (str "https://" % ".example")) es)]
    {:checks {:wrote-list (boolean (seq es))
              :all-relevant (= (count relevant) (count es))
              :all-fetched (= (count grounded) (count es))}
     :reward (if (seq es) (/ (+ (count relevant) (count grounded)) (* 2 (count es))) 0)}))`;

Deno.test(
  "checker.clj reads fetched pages and judgements; judge-requests gets the input without :judgements",
  opts,
  async () => {
    const b = bundle(JUDGED);
    const files = { "/out/list.md": "Wato\nDust\n" };
    const fetched = { "https://Wato.example": "Wato: agents at work" };
    const input = checkerInputFor(b, { files, fetched });
    const asked = await pool.judgeRequests(b.checker, input);
    assert.ok(asked.ok, JSON.stringify(asked));
    assert.deepEqual(asked.requests, [
      { id: "wato", prompt: "Is Wato a competitor? Page: Wato: agents at work" },
      { id: "dust", prompt: "Is Dust a competitor? Page: none" },
    ]);
    // Extra keys are dropped before validation; the one we planted says what it saw.
    const raw = await pool.judgeRequests(
      b.checker.replace(":has-judgements", ":prompt-extra"),
      input,
    );
    assert.ok(raw.ok);
    const v = verdict(
      await check(b, { files, fetched, judgements: { wato: "Yes, it is.", dust: "No." } }),
    );
    assert.deepEqual(v.checks, { "wrote-list": true, "all-relevant": false, "all-fetched": false });
    assert.equal(v.reward, 0.5);
    // As a run does it: judgements added to the input after the judge answered.
    input.judgements = { wato: "Yes.", dust: "yes, a rival" };
    const judged = verdict(await pool.check(b.checker, input));
    assert.equal(judged.checks["all-relevant"], true);
  },
);

Deno.test("judge-requests: none defined, nil, and an invalid shape", opts, async () => {
  const none = bundle(`(ns j) (defn check [_] {:checks {} :reward 0})`);
  const r0 = await pool.judgeRequests(none.checker, checkerInputFor(none, { files: {} }));
  assert.deepEqual(r0.ok && r0.requests, []);
  const nil = bundle(
    `(ns j) (defn judge-requests [_] nil) (defn check [_] {:checks {} :reward 0})`,
  );
  const r1 = await pool.judgeRequests(nil.checker, checkerInputFor(nil, { files: {} }));
  assert.deepEqual(r1.ok && r1.requests, []);
  const bad = bundle(
    `(ns j) (defn judge-requests [_] [{:id 1}]) (defn check [_] {:checks {} :reward 0})`,
  );
  const r2 = faultOf(await pool.judgeRequests(bad.checker, checkerInputFor(bad, { files: {} })));
  assert.equal(r2.fault, "invalid-verdict");
  assert.match(r2.message, /^judgeRequests returned no requests: 0\.id: expected a string, got 1/);
});

Deno.test(
  "checker.clj calibrates like checker.js: the reference passes, each damage loses its checks",
  opts,
  async () => {
    const b = bundle(JUDGED, {
      "calibration.edn": `{:reference {"/out/list.md" "Wato"}
 :fetched {"https://Wato.example" "page"}
 :judgements {"wato" "Yes."}
 :damaged {:irrelevant {:files {"/out/list.md" "Wato\\nPizza"} :judgements {"wato" "Yes." "pizza" "No."}
                        :loses [:all-relevant :all-fetched]}
           :nothing {:files {} :loses [:wrote-list]}}}`,
    });
    const r = await calibrate(b, pool);
    assert.deepEqual(r.problems, []);
    assert.equal(r.ok, true);
  },
);

Deno.test(
  "checker.clj compatibility: Exception in catch, Integer/parseInt and friends, format, String methods",
  opts,
  async () => {
    const b = bundle(`(ns compat.checker)
(defn- parse [s] (try (Integer/parseInt s) (catch NumberFormatException _ :bad)))
(defn check [_]
  {:checks {:parse-int (= 42 (parse "42"))
            :parse-bad (= :bad (parse "4x2"))
            :radix (= 255 (Integer/parseInt "ff" 16))
            :long (= 7 (Long/parseLong "7"))
            :double (= 1.5 (Double/parseDouble "1.5"))
            :double-bad (try (Double/parseDouble "x") false (catch Exception _ true))
            :value-of (= "12" (String/valueOf 12))
            :format (= "1.50 EUR" (format "%.2f %s" 1.5 "EUR"))
            :catch-exception (try (throw (js/Error. "boom")) (catch Exception e (= "boom" (.getMessage e))))
            :catch-ex-info (try (throw (ex-info "x" {:a 1})) (catch Exception e (= {:a 1} (ex-data e))))
            :throw-jvm (try (throw (IllegalArgumentException. "no")) (catch RuntimeException e (= "no" (ex-message e))))
            :throwable (try (throw (js/TypeError. "t")) (catch Throwable _ true))
            :strings (and (.contains "abc" "b") (.isEmpty "") (.equals "a" "a")
                          (.equalsIgnoreCase "ABC" "abc") (.matches "123" "\\\\d+") (.startsWith "abc" "a"))}
   :reward 1})`);
    const v = verdict(await check(b));
    assert.deepEqual(Object.entries(v.checks).filter(([, ok]) => !ok), []);
  },
);

Deno.test(
  "checker.clj faults: syntax error with line and column, compile error, missing check",
  opts,
  async () => {
    const syntax = faultOf(await check(bundle("(ns s)\n(defn check [x]\n  (let [a 1] a)")));
    assert.equal(syntax.fault, "syntax");
    assert.match(
      syntax.message,
      /^checker\.clj has a syntax error: EOF while reading.*\(checker\.clj line 3, column \d+\)$/,
    );
    const unresolved = faultOf(await check(bundle("(ns s)\n\n(defn check [x]\n  (frobnicate x))")));
    assert.equal(unresolved.fault, "syntax");
    assert.match(
      unresolved.message,
      /^checker\.clj does not compile: Unable to resolve symbol: frobnicate \(checker\.clj line 3/,
    );
    const none = faultOf(await check(bundle("(ns s) (defn chek [x] x)")));
    assert.equal(none.fault, "no-check");
    assert.match(none.message, /^checker\.clj defines no `check` \(looked in namespace s/);
    const notFn = faultOf(await check(bundle("(ns s) (def check 5)")));
    assert.equal(notFn.fault, "no-check");
    assert.match(notFn.message, /defines `check` in namespace s but it is not a function/);
  },
);

Deno.test(
  "checker.clj faults: a throw names checker.clj, its ex-data and line; a bad verdict is invalid",
  opts,
  async () => {
    const threw = faultOf(
      await check(
        bundle('(ns t)\n(defn check [x]\n  (throw (ex-info "no answer" {:file "/out/a.edn"})))'),
      ),
    );
    assert.equal(threw.fault, "threw");
    assert.equal(
      threw.message,
      `checker.clj's check threw: no answer {:file "/out/a.edn"} (checker.clj line 3, column 3)`,
    );
    const atLoad = faultOf(await check(bundle('(ns t)\n(throw (Exception. "at load"))')));
    assert.equal(atLoad.fault, "threw");
    assert.match(
      atLoad.message,
      /^checker\.clj threw while loading: at load \(checker\.clj line 2/,
    );
    const reward = faultOf(
      await check(bundle("(ns t) (defn check [_] {:checks {:a true} :reward 2})")),
    );
    assert.equal(reward.fault, "invalid-verdict");
    assert.match(
      reward.message,
      /^The checker returned no verdict: reward: expected a number in \[0, 1\], got 2/,
    );
    const names = faultOf(
      await check(bundle('(ns t) (defn check [_] {:checks {"a" true} :reward 1})')),
    );
    assert.match(names.message, /checks: expected keyword names such as :ok\?, got "a"/);
    const nils = faultOf(
      await check(bundle("(ns t) (defn check [_] {:checks {:a nil} :reward 1})")),
    );
    assert.match(nils.message, /checks\.a: expected true or false, got null/);
    const fn = faultOf(
      await check(bundle("(ns t) (defn check [_] {:checks {:a (fn [])} :reward 1})")),
    );
    assert.match(fn.message, /^The checker returned no verdict: checks\.a: expected true or false/);
    // Extra keys are tolerated, even ones EDN cannot carry.
    assert.equal(
      verdict(
        await check(bundle("(ns t) (defn check [_] {:checks {:a true} :reward 1 :f (fn [])})")),
      )
        .reward,
      1,
    );
  },
);

Deno.test(
  "checker.clj faults: the time limit cannot be caught; memory and stack are capped",
  opts,
  async () => {
    const loop = faultOf(
      await check(
        bundle(
          "(ns l) (defn check [_] (try (loop [] (recur)) (catch :default _ {:checks {} :reward 1})))",
        ),
        {},
        1_500,
      ),
    );
    assert.equal(loop.fault, "timeout");
    assert.equal(loop.message, "The checker did not finish within 1500ms (checker.clj)");
    const atLoad = faultOf(await check(bundle("(ns l) (loop [] (recur))"), {}, 1_500));
    assert.equal(atLoad.fault, "timeout");
    const memory = faultOf(
      await check(
        bundle('(ns m) (defn check [_] {:checks {} :reward (count (.repeat "x" 400000000))})'),
      ),
    );
    assert.equal(memory.fault, "memory");
    assert.match(memory.message, /^checker\.clj ran out of memory \(the sandbox allows 256 MiB\)/);
    const deep = faultOf(
      await check(
        bundle(
          "(ns d) (defn d [n] (if (zero? n) 0 (inc (d (dec n))))) (defn check [_] {:checks {} :reward (d 100000)})",
        ),
      ),
    );
    assert.equal(deep.fault, "memory");
    assert.match(deep.message, /^checker\.clj overflowed its stack/);
    // The worker still grades after all of that.
    assert.equal(
      verdict(await check(bundle("(ns ok) (defn check [_] {:checks {:a true} :reward 1})"))).reward,
      1,
    );
  },
);

const MUTATE = `(ns iso.checker)
(def counter (atom 0))
(defn check [{:keys [params]}]
  (let [seen {:atom (= 0 @counter)
              :var (not (resolve 'iso.checker/planted))
              :ns (nil? (find-ns 'iso.other))
              :core (nil? (resolve 'clojure.core/leaked))
              :core-fn (= "a1" (format "a%s" 1))
              :global (undefined? (.-leak js/globalThis))
              :prototype (undefined? (.-shout (.-prototype js/String)))
              :builtin (= 3 (js/Math.abs -3))}]
    (when (:mutate params)
      (swap! counter inc)
      (intern 'iso.checker 'planted 1)
      (create-ns 'iso.other)
      (intern 'clojure.core 'leaked 5)
      (alter-var-root #'clojure.core/format (constantly (fn [& _] "pwned")))
      (set! (.-leak js/globalThis) 1)
      (set! (.-shout (.-prototype js/String)) (fn [] "!"))
      (set! (.-abs js/Math) (fn [_] 0)))
    {:checks seen :reward 1}))`;

Deno.test(
  "isolation: vars, namespaces, atoms, core vars, globals and prototypes of one call are gone in the next",
  opts,
  async () => {
    const b = bundle(MUTATE);
    for (let i = 0; i < 3; i++) {
      const v = verdict(await check(b, { params: { mutate: true } }));
      assert.deepEqual(Object.entries(v.checks).filter(([, ok]) => !ok), [], `call ${i}`);
    }
    // Another checker on the same worker sees nothing of them either.
    const other = bundle(
      MUTATE.replace("iso.checker", "iso.second").replaceAll("iso.checker/", "iso.second/"),
    );
    const v = verdict(await check(other));
    assert.deepEqual(Object.entries(v.checks).filter(([, ok]) => !ok), []);
    const stats = pool.stats().clojure!;
    assert.equal(stats.workersStarted, 1);
  },
);

Deno.test(
  "escapes: js/globalThis, constructors, eval and import reach only QuickJS built-ins",
  opts,
  async () => {
    const b = bundle(`(ns esc)
(defn check [_]
  (let [names (set (js/Object.getOwnPropertyNames js/globalThis))
        via-fn ((js/Function. "return [typeof Deno, typeof fetch, typeof require, typeof process, typeof setTimeout, typeof WebAssembly, typeof XMLHttpRequest].join()"))
        via-ctor (((.-constructor (.-constructor (fn []))) "return typeof Deno"))
        via-eval (js/eval "typeof Deno")
        imported (try (js/eval "import('file:///etc/passwd')") :promise (catch :default e :refused))]
    {:checks {:no-host-names (empty? (filter names ["Deno" "fetch" "require" "process" "setTimeout" "WebAssembly" "Worker" "navigator"]))
              :fn (= "undefined,undefined,undefined,undefined,undefined,undefined,undefined" via-fn)
              :ctor (= "undefined" via-ctor)
              :eval (= "undefined" via-eval)
              :import (some? imported)}
     :reward 1}))`);
    const v = verdict(await check(b));
    assert.deepEqual(Object.entries(v.checks).filter(([, ok]) => !ok), []);
    // The Clojure worker holds no Deno permission, though this test process holds them.
    const permissions = pool.stats().clojure!.workerPermissions!;
    for (const name of ["read", "write", "net", "env", "run", "ffi", "sys", "import"]) {
      assert.notEqual(permissions[name], "granted", `${name}: ${permissions[name]}`);
    }
  },
);

Deno.test(
  "prepared checkers are reused: a checker loads once per worker, then each call restores it",
  opts,
  async () => {
    const b = bundle(`(ns reuse.checker) (defn check [_] {:checks {:a true} :reward 1})`);
    const before = pool.stats().clojure?.checkersLoaded ?? 0;
    for (let i = 0; i < 4; i++) verdict(await check(b));
    assert.equal(pool.stats().clojure!.checkersLoaded - before, 1);
  },
);

Deno.test("a checker.js bundle beside checker.clj runs checker.js", opts, async () => {
  const b = parseBundle({
    name: "both",
    files: new Map([
      ["workflow.edn", '{:title "B" :task "x"}'],
      ["checker.clj", "(ns b) (defn check [_] {:checks {:clj true} :reward 1})"],
      ["checker.js", "export function check() { return { checks: { js: true }, reward: 1 }; }"],
      ["fixtures/a.md", "x"],
    ]),
  });
  assert.equal(b.checkerFile, "checker.js");
  assert.deepEqual(verdict(await check(b)).checks, { js: true });
});

Deno.test(
  "hostile checkers: replaced built-ins, throwing getters and huge results are faults or their own verdicts",
  opts,
  async () => {
    // JSON replaced when the checker loads: the glue took its own JSON before any checker ran.
    const patcher = bundle(`(ns hostile)
(set! (.-stringify js/JSON) (fn [& _] "{\\"edn\\": \\"{:checks {:forged true} :reward 1}\\"}"))
(set! (.-parse js/JSON) (fn [& _] nil))
(defn check [_] {:checks {:honest true} :reward 1})`);
    assert.deepEqual(verdict(await check(patcher)).checks, { honest: true });
    // Array.prototype.push replaced once its verdict is built: printing it breaks, its fault.
    const pusher = bundle(`(ns hostile1)
(defn check [_]
  (let [v {:checks {:honest true} :reward 1}]
    (set! (.. js/Array -prototype -push) (fn [& _] 0))
    v))`);
    assert.equal(faultOf(await check(pusher)).fault, "invalid-verdict");
    const getter = bundle(`(ns hostile2)
(defn check [_]
  (throw (js/Object.defineProperty (js/Error. "x") "message" #js {:get (fn [] (throw (js/Error. "no")))})))`);
    const threw = faultOf(await check(getter));
    assert.equal(threw.fault, "threw");
    const huge = bundle(
      `(ns hostile3) (defn check [_] {:checks {(keyword (.repeat "x" 9000000)) true} :reward 1})`,
    );
    const big = faultOf(await check(huge));
    assert.equal(big.fault, "invalid-verdict");
    assert.match(big.message, /too large/);
    // None of them cost the worker, and the next checker sees nothing of them.
    assert.equal(pool.stats().clojure!.workersReplaced, 0);
    const plain = bundle(
      `(ns plain) (defn check [_] {:checks {:json (= "[1]" (js/JSON.stringify #js [1]))} :reward 1})`,
    );
    assert.deepEqual(verdict(await check(plain)).checks, { json: true });
  },
);

Deno.test(
  "checker.clj faults: a check name EDN cannot read back is an invalid verdict, not other checks",
  opts,
  async () => {
    // Printed, (keyword "x true :y") would read as the checks :x true and :y false.
    for (const name of ["a b", "x true :y", "a}", "a,b", "a;b"]) {
      const run = faultOf(
        await check(
          bundle(`(ns t) (defn check [_] {:checks {(keyword ${JSON.stringify(name)}) false
                                                   :ok true} :reward 1})`),
        ),
      );
      assert.equal(run.fault, "invalid-verdict");
      assert.equal(
        run.message,
        "The checker returned no verdict: checks: checker.clj named a check " +
          `(keyword ${JSON.stringify(name)}), which is no EDN keyword (a space, a delimiter or ` +
          "a character EDN cannot read back would make it other checks): use names such as :ok?",
      );
    }
    // Names that read back as themselves are checks, namespaced ones too.
    const ok = verdict(
      await check(
        bundle("(ns t) (defn check [_] {:checks {:a/b true :ok? true :x-1 false} :reward 1})"),
      ),
    );
    assert.deepEqual(ok.checks, { "a/b": true, "ok?": true, "x-1": false });
  },
);
