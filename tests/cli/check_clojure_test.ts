import assert from "node:assert/strict";
import { join } from "node:path";
import { memoryContext } from "../../cli/context.ts";
import { runMain } from "../../main.ts";
import { writeTree } from "../../adapters/files/bundle_dir.ts";
import { recallBundle } from "../helpers/bundles.ts";

async function dvergr(...args: string[]) {
  const ctx = memoryContext();
  const code = await runMain(args, ctx);
  return { code, out: ctx.out.join(""), err: ctx.err.join("") };
}

const RECALL_CLJ = `(ns recall.checker
  (:require [clojure.string :as str]))

(defn check [{:keys [files gold]}]
  (let [text (get files "/out/list.md" "")
        found (filter #(str/includes? text %) (:names gold))]
    {:checks {:wrote-list (not (str/blank? text))
              :found-all (= (count found) (count (:names gold)))}
     :reward (/ (count found) (count (:names gold)))}))
(def letters #"\\p{L}+")
`;

async function clojureBundle(o: Record<string, string | null> = {}) {
  const dir = join(await Deno.makeTempDir(), "recall-clj");
  await writeTree(dir, recallBundle({ "checker.js": null, "checker.clj": RECALL_CLJ, ...o }));
  return dir;
}

Deno.test("dvergr check names checker.clj, warns about Java regex syntax, grades an answer", async () => {
  const dir = await clojureBundle();
  const answer = await Deno.makeTempDir();
  await writeTree(answer, new Map([["out/list.md", "Wato"]]));
  const r = await dvergr("check", dir, "--answer", answer);
  assert.equal(r.code, 0, r.out + r.err);
  assert.match(r.out, /^Checker {2}checker\.clj \(Clojure, run by SCI in the sandbox\)$/m);
  assert.match(
    r.out,
    /^Warning {2}checker\.clj line 10, column 14: #"\\p\{L\}\+": \\p\{L\} is a Java Unicode class/m,
  );
  assert.match(r.out, /reward 0\.500 {2}checks 1\/2/);
  const json = JSON.parse((await dvergr("check", dir, "--json")).out);
  assert.equal(json.checker, "checker.clj");
  assert.equal(json.warnings.length, 1);
  assert.equal(json.warnings[0].line, 10);
  const cal = await dvergr("calibrate", dir);
  assert.equal(cal.code, 0, cal.out + cal.err);
});

Deno.test("dvergr check says checker.js grades when a bundle has both checkers", async () => {
  const dir = join(await Deno.makeTempDir(), "both");
  await writeTree(dir, recallBundle({ "checker.clj": RECALL_CLJ }));
  const r = await dvergr("check", dir);
  assert.equal(r.code, 0, r.out + r.err);
  assert.match(
    r.out,
    /^Checker {2}checker\.js \(checker\.clj is also present and not used: checker\.js grades\)$/m,
  );
  assert.doesNotMatch(r.out, /Warning/);
});

Deno.test("dvergr check: a checker.clj that does not load is a problem at its line, exit 2", async () => {
  const dir = await clojureBundle({ "checker.clj": "(ns broken)\n(defn check [x]\n  {:checks {}" });
  const r = await dvergr("check", dir);
  assert.equal(r.code, 2, r.out + r.err);
  assert.match(r.out, /- checker\.clj line 3, column \d+: syntax error: EOF while reading/);
  const threw = await clojureBundle({ "checker.clj": '(ns t)\n\n(throw (Exception. "at load"))' });
  const t = await dvergr("check", threw);
  assert.equal(t.code, 2, t.out + t.err);
  assert.match(t.out, /- checker\.clj line 3, column 1: threw while loading: at load/);
});
