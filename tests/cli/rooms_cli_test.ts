import assert from "node:assert/strict";
import { join } from "node:path";
import { memoryContext } from "../../cli/context.ts";
import { runMain } from "../../main.ts";
import { readBundleDir, writeTree } from "../../adapters/files/bundle_dir.ts";
import { contentId } from "../../core/bundle/content_id.ts";
import { recallBundle } from "../helpers/bundles.ts";

const CLOJURE_EXPORT = new URL("../fixtures/exports/tiny_clojure.edn", import.meta.url).pathname;

/** Runs dvergr in `cwd` with DVERGR_HOME unset unless given. */
async function dvergr(cwd: string, args: string[], env: Record<string, string> = {}) {
  const ctx = memoryContext({ cwd, env });
  const code = await runMain(args, ctx);
  return { code, out: ctx.out.join(""), err: ctx.err.join("") };
}

async function workspace(): Promise<{ cwd: string; bundle: string }> {
  const cwd = await Deno.makeTempDir({ prefix: "dvergr-cli-rooms-" });
  const bundle = join(cwd, "recall");
  await writeTree(bundle, recallBundle());
  return { cwd, bundle };
}

async function commitCount(cwd: string, room: string, home = ".dvergr"): Promise<number> {
  const r = await dvergr(cwd, ["room", "log", room, "--home", home, "--json"]);
  assert.equal(r.code, 0, r.out + r.err);
  return JSON.parse(r.out).total;
}

Deno.test("dvergr export → import --room → list → export: the same id, one commit per import", async () => {
  const { cwd, bundle } = await workspace();
  const id = contentId(recallBundle());
  const exp = await dvergr(cwd, ["export", bundle, "-o", "recall.edn"]);
  assert.equal(exp.code, 0, exp.out + exp.err);
  assert.match(exp.out, new RegExp(`^Exported recall ${id} \\(5 files\\) to recall\\.edn\\n`));
  assert.match(exp.out, /Calibration: ok/);

  assert.equal((await dvergr(cwd, ["room", "create", "books"])).code, 0);
  const before = await commitCount(cwd, "books");
  const imp = await dvergr(cwd, ["import", "recall.edn", "--room", "books"]);
  assert.equal(imp.code, 0, imp.out + imp.err);
  assert.match(imp.out, new RegExp(`^Imported recall ${id} \\(5 files\\) into room books`));
  assert.match(imp.out, /Trust: ad-hoc \(promote it here with `dvergr promote books\/recall`\)/);
  assert.equal(await commitCount(cwd, "books"), before + 1);

  const again = await dvergr(cwd, ["import", "recall.edn", "--room", "books"]);
  assert.equal(again.code, 0);
  assert.match(again.out, /already holds exactly recall .*: nothing to do/);
  assert.equal(await commitCount(cwd, "books"), before + 1);

  const list = await dvergr(cwd, ["list"]);
  assert.equal(list.code, 0, list.err);
  assert.match(list.out, new RegExp(`^books\\n  recall +${id}  ad-hoc  Recall\\n`));

  // ROOM/NAME reads the bundle from the room: exported again, the same id.
  const out = await dvergr(cwd, ["export", "books/recall"]);
  assert.equal(out.code, 0, out.err);
  assert.match(out.out, new RegExp(`:bundle "${id}"`));
  assert.match(out.err, /^Exported recall /);
});

Deno.test("dvergr export ROOM/NAME writes the whole export of a bundle bigger than a tool result", async () => {
  const cwd = await Deno.makeTempDir({ prefix: "dvergr-cli-rooms-" });
  const files = recallBundle({ "fixtures/docs/big.md": 'Wato "and" Dust.\n'.repeat(10_000) });
  await writeTree(join(cwd, "big"), files);
  assert.equal((await dvergr(cwd, ["room", "create", "books"])).code, 0);
  assert.equal(
    (await dvergr(cwd, ["room", "write", "books", "workflows/big", "--dir", "big"])).code,
    0,
  );
  const exp = await dvergr(cwd, ["export", "books/big", "-o", "big.edn"]);
  assert.equal(exp.code, 0, exp.err);
  const text = await Deno.readTextFile(join(cwd, "big.edn"));
  assert.ok(text.length > 100_000, `${text.length} chars`);
  assert.equal((await dvergr(cwd, ["room", "create", "dst"])).code, 0);
  const imp = await dvergr(cwd, ["import", "big.edn", "--room", "dst"]);
  assert.equal(imp.code, 0, imp.err);
  assert.match(imp.out, new RegExp(`^Imported big ${contentId(files)} `));
});

Deno.test("dvergr import --dir: directory → export → directory, refusing a non-empty one without --force", async () => {
  const { cwd, bundle } = await workspace();
  assert.equal((await dvergr(cwd, ["export", bundle, "-o", "x.edn"])).code, 0);
  const imp = await dvergr(cwd, ["import", "x.edn", "--dir", "copy/recall"]);
  assert.equal(imp.code, 0, imp.err);
  const copy = await readBundleDir(join(cwd, "copy/recall"));
  assert.equal(contentId(copy.files), contentId(recallBundle()));

  await Deno.writeTextFile(join(cwd, "other.txt"), "x");
  const refused = await dvergr(cwd, ["import", "x.edn", "--dir", "."]);
  assert.equal(refused.code, 2);
  assert.match(refused.err, /error\[TARGET_EXISTS\].*not empty/);
  assert.match(refused.err, /--force/);
  const same = await dvergr(cwd, ["import", "x.edn", "--dir", "copy/recall"]);
  assert.match(same.out, /nothing to do/);
  const usage = await dvergr(cwd, ["import", "x.edn", "--dir", "a", "--as", "b"]);
  assert.equal(usage.code, 2);
  assert.match(usage.err, /Cannot use --as with --dir/);
});

Deno.test("dvergr import refuses a tampered export with exit 2 and writes nothing", async () => {
  const { cwd, bundle } = await workspace();
  assert.equal((await dvergr(cwd, ["export", bundle, "-o", "x.edn"])).code, 0);
  const text = await Deno.readTextFile(join(cwd, "x.edn"));
  const bad = text.replace("Wato and Dust", "Wato and Rust");
  assert.notEqual(bad, text);
  await Deno.writeTextFile(join(cwd, "bad.edn"), bad);
  await dvergr(cwd, ["room", "create", "r"]);
  const r = await dvergr(cwd, ["import", "bad.edn", "--room", "r"]);
  assert.equal(r.code, 2);
  assert.match(r.err, /^error\[EXPORT_TAMPERED\]: The files are not the bundle the manifest names/);
  assert.match(r.err, /\nhint: Nothing was written/);
  assert.equal(await commitCount(cwd, "r"), 1);
  const d = await dvergr(cwd, ["import", "bad.edn", "--dir", "out"]);
  assert.equal(d.code, 2);
  await assert.rejects(() => Deno.stat(join(cwd, "out")), Deno.errors.NotFound);

  const json = await dvergr(cwd, ["import", "bad.edn", "--room", "r", "--json"]);
  assert.equal(json.code, 2);
  const err = JSON.parse(json.out).error;
  assert.equal(err.code, "EXPORT_TAMPERED");
  assert.notEqual(err.details.manifest, err.details.computed);

  const missing = await dvergr(cwd, ["import", "x.edn", "--room", "nope"]);
  assert.equal(missing.code, 2);
  assert.match(missing.err, /no such room[\s\S]*dvergr room create nope/);
});

Deno.test("dvergr import names an export saved in another encoding (Latin-1) as not UTF-8, not as tampered", async () => {
  const { cwd, bundle } = await workspace();
  await writeTree(bundle, recallBundle({ "fixtures/docs/a.md": "Wato und Dust aus Zürich." }));
  assert.equal((await dvergr(cwd, ["export", bundle, "-o", "x.edn"])).code, 0);
  const text = await Deno.readTextFile(join(cwd, "x.edn"));
  // What an editor saving as Windows-1252 writes: ü as the one byte 0xfc.
  const latin1 = Uint8Array.from([...text].map((c) => c.charCodeAt(0)));
  await Deno.writeFile(join(cwd, "latin1.edn"), latin1);
  await dvergr(cwd, ["room", "create", "r"]);
  const r = await dvergr(cwd, ["import", "latin1.edn", "--room", "r"]);
  assert.equal(r.code, 2);
  assert.match(
    r.err,
    /^error\[EXPORT_INVALID\]: Cannot import "latin1\.edn": it is not UTF-8 text/,
  );
  assert.match(r.err, /byte 0xfc at offset \d+/);
  assert.equal(await commitCount(cwd, "r"), 1);
});

Deno.test("dvergr import installs the earlier system's export (Clojure checker) and says its checker is checker.clj", async () => {
  const { cwd } = await workspace();
  await dvergr(cwd, ["room", "create", "old"]);
  const r = await dvergr(cwd, ["import", CLOJURE_EXPORT, "--room", "old"]);
  assert.equal(r.code, 0, r.err);
  assert.match(r.out, /Imported tiny 2009b08f-92a1-5af7-8637-bf82ff4c0e6d \(3 files\)/);
  assert.match(r.out, /note: its checker is checker\.clj .*runs in the Clojure sandbox/);
  assert.equal(await commitCount(cwd, "old"), 2);
  const list = await dvergr(cwd, ["list", "old"]);
  assert.match(
    list.out,
    /tiny +2009b08f-92a1-5af7-8637-bf82ff4c0e6d {2}ad-hoc {2}T {2}\(Clojure checker/,
  );
});

Deno.test("dvergr promote: room tier for a calibrated bundle, exit 1 and no promotion otherwise", async () => {
  const { cwd } = await workspace();
  const home = join(cwd, "h");
  const env = { DVERGR_HOME: home };
  await dvergr(cwd, ["room", "create", "r"], env);
  const files = recallBundle();
  await writeTree(join(cwd, "src"), files);
  const w = await dvergr(cwd, ["room", "write", "r", "workflows/recall", "--dir", "src"], env);
  assert.equal(w.code, 0, w.err);
  assert.match(w.out, /wrote 5 files/);

  const p = await dvergr(cwd, ["promote", "r/recall"], env);
  assert.equal(p.code, 0, p.out + p.err);
  assert.match(p.out, /Calibrated and promoted: its checker's trust tier on this host is now room/);
  assert.match((await dvergr(cwd, ["list"], env)).out, /recall +\S+ {2}room /);

  // Break the calibration: a damaged variant that keeps its check.
  await dvergr(cwd, [
    "room",
    "write",
    "r",
    "workflows/recall/calibration.edn",
    "--text",
    '{:reference {"/out/list.md" "Wato, Dust"} :damaged {:same {:files {"/out/list.md" "Wato, Dust"} :loses [:found-all]}}}',
  ], env);
  const q = await dvergr(cwd, ["promote", "r/recall", "--json"], env);
  assert.equal(q.code, 1);
  const data = JSON.parse(q.out);
  assert.equal(data.promoted, false);
  assert.equal(data.tier, "ad-hoc");
  assert.match((await dvergr(cwd, ["list"], env)).out, /recall +\S+ {2}ad-hoc /);

  const usage = await dvergr(cwd, ["promote", "./recall"], env);
  assert.equal(usage.code, 2);
  assert.match(usage.err, /takes one ROOM\/NAME/);
});

Deno.test("dvergr check, calibrate and benchmark take ROOM/NAME with --home", async () => {
  const { cwd, bundle } = await workspace();
  const home = join(cwd, "home");
  await dvergr(cwd, ["room", "create", "r", "--home", home]);
  await dvergr(cwd, ["export", bundle, "-o", "x.edn"]);
  assert.equal((await dvergr(cwd, ["import", "x.edn", "--room", "r", "--home", home])).code, 0);
  const id = contentId(recallBundle());

  const check = await dvergr(cwd, ["check", "r/recall", "--home", home]);
  assert.equal(check.code, 0, check.out + check.err);
  assert.match(check.out, new RegExp(`^Bundle recall  ${id}`));
  const cal = await dvergr(cwd, ["calibrate", "r/recall", "--home", home]);
  assert.equal(cal.code, 0, cal.out + cal.err);
  assert.match(cal.out, /^calibrated: /m);

  assert.equal((await dvergr(cwd, ["promote", "r/recall", "--home", home])).code, 0);
  const before = await commitCount(cwd, "r", home);
  const bench = await dvergr(cwd, [
    "benchmark",
    "r/recall",
    "--home",
    home,
    "--candidate",
    "builtin:reference",
    "--json",
  ]);
  assert.equal(bench.code, 0, bench.out + bench.err);
  const result = JSON.parse(bench.out);
  assert.equal(result.room, "r");
  assert.equal(result.home, home);
  assert.equal(result.scorecard.trust, "room");
  assert.equal(await commitCount(cwd, "r", home), before, "the room's bundle is used as it is");

  const missing = await dvergr(cwd, ["check", "r/nope", "--home", home]);
  assert.equal(missing.code, 2);
  assert.match(missing.err, /no workflow nope in room r[\s\S]*hint: Its bundles: recall/);
  const noHome = await dvergr(cwd, ["check", "r/recall"]);
  assert.equal(noHome.code, 2);
  assert.match(
    noHome.err,
    /there is no directory r\/recall, and the home .*\.dvergr has no room r/,
  );
});

Deno.test("dvergr room write/read/files/log: one commit per write, refused paths, --json", async () => {
  const { cwd } = await workspace();
  await dvergr(cwd, ["room", "create", "t"]);
  await Deno.writeTextFile(join(cwd, "q3.csv"), "a;b\n1;Zürich\n");
  const w = await dvergr(cwd, ["room", "write", "t", "tables/q3.csv", "--file", "q3.csv"]);
  assert.equal(w.code, 0, w.err);
  const r = await dvergr(cwd, ["room", "read", "t", "tables/q3.csv"]);
  assert.equal(r.out, "a;b\n1;Zürich\n");
  await dvergr(cwd, ["room", "write", "t", "notes.md", "--text", "hi", "--message", "Add notes"]);
  const del = await dvergr(cwd, ["room", "write", "t", "tables/q3.csv", "--delete"]);
  assert.match(del.out, /removed 1 file/);
  const files = await dvergr(cwd, ["room", "files", "t", "--json"]);
  assert.deepEqual(JSON.parse(files.out).files, [{ path: "notes.md", bytes: 2 }]);
  const log = await dvergr(cwd, ["room", "log", "t"]);
  assert.deepEqual(
    log.out.trim().split("\n").map((l) => l.replace(/^\S+ {2}\S+ {2}/, "")),
    ["Remove tables/q3.csv", "Add notes", "Write tables/q3.csv", "Create room t"],
  );

  for (const bad of ["../x", ".git/config", "/abs"]) {
    const e = await dvergr(cwd, ["room", "write", "t", bad, "--text", "x"]);
    assert.equal(e.code, 2, bad);
    assert.match(e.err, /error\[PATH_INVALID\]/);
  }
  await Deno.writeFile(join(cwd, "bin.dat"), new Uint8Array([0xff, 0xfe, 0x00, 0x81]));
  const bin = await dvergr(cwd, ["room", "write", "t", "bin.dat", "--file", "bin.dat"]);
  assert.equal(bin.code, 2);
  assert.match(bin.err, /not UTF-8 text/);
  const two = await dvergr(cwd, ["room", "write", "t", "a.md", "--text", "x", "--delete"]);
  assert.equal(two.code, 2);
  assert.match(two.err, /exactly one of --text, --file, --delete or --dir/);
  assert.equal(await commitCount(cwd, "t"), 4);

  const list = await dvergr(cwd, ["room", "list"]);
  assert.match(list.out, /^t +4 commits/);
  const none = await dvergr(join(cwd, "recall"), ["room", "list"]);
  assert.equal(none.code, 2);
  assert.match(none.err, /Cannot open the home .*no such directory/);
});
