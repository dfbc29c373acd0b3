import assert from "node:assert/strict";
import { DvergrError } from "../../../core/errors.ts";
import { EXPORT_FORMAT, exportBundle, hasOnlyClojureChecker } from "../../../core/bundle/export.ts";
import { verifyExport } from "../../../core/bundle/verify_export.ts";
import { contentId } from "../../../core/bundle/content_id.ts";
import type { FileMap } from "../../../core/bundle/file_map.ts";
import { readEdn } from "../../../core/edn/read.ts";
import { writeEdn } from "../../../core/edn/write.ts";
import { type EdnMap, kw } from "../../../core/edn/values.ts";
import { recallBundle } from "../../helpers/bundles.ts";

const NOW = new Date("2026-10-01T12:00:00.000Z");
const CAL = { ok: true, problems: [] };

/** A small bundle with non-ASCII text, so multi-byte characters are tampered with too. */
function smallBundle(): FileMap {
  return recallBundle({ "fixtures/docs/a.md": "Wato and Dust are products (Zürich, 北京) 🙂." });
}

function exportOf(files: FileMap = smallBundle(), name = "recall"): string {
  return exportBundle({ name, files }, CAL, { version: "0.1.0", now: NOW });
}

/** Rewrites an export's EDN value: the files map and the manifest map are given to `f`. */
function rewrite(text: string, f: (files: EdnMap, manifest: EdnMap) => void): string {
  const top = readEdn(text) as EdnMap;
  f(top.get(kw("files")) as EdnMap, top.get(kw("manifest")) as EdnMap);
  return writeEdn(top, { pretty: true });
}

function refusal(f: () => unknown): DvergrError {
  try {
    f();
  } catch (e) {
    if (e instanceof DvergrError) return e;
    throw e;
  }
  assert.fail("expected a refusal");
}

Deno.test("exportBundle() writes format dvergr-workflow/1: the manifest in order, files sorted", () => {
  const files = smallBundle();
  const text = exportOf(files);
  const top = readEdn(text) as EdnMap;
  assert.deepEqual([...top.keys()], [kw("manifest"), kw("files")]);
  const manifest = top.get(kw("manifest")) as EdnMap;
  assert.deepEqual(
    [...manifest.keys()].map(String),
    [
      ":format",
      ":name",
      ":bundle",
      ":title",
      ":dvergr-version",
      ":exported-at",
      ":calibration",
    ],
  );
  assert.equal(manifest.get(kw("format")), EXPORT_FORMAT);
  assert.equal(manifest.get(kw("bundle")), contentId(files));
  assert.equal(manifest.get(kw("title")), "Recall");
  assert.deepEqual(manifest.get(kw("exported-at")), NOW);
  assert.match(text, /:exported-at #inst "2026-10-01T12:00:00.000-00:00"/);
  assert.match(text, /:calibration \{:ok\? true, :problems \[\]\}/);
  const paths = [...(top.get(kw("files")) as EdnMap).keys()] as string[];
  assert.deepEqual(paths, [...files.keys()].sort());
});

Deno.test("verifyExport() gives back the exported files and id (export → verify → same id)", () => {
  const files = smallBundle();
  const v = verifyExport(exportOf(files), { file: "recall.edn" });
  assert.equal(v.id, contentId(files));
  assert.equal(v.name, "recall");
  assert.deepEqual([...v.files].sort(), [...files].sort());
  assert.equal(v.manifest.dvergrVersion, "0.1.0");
  assert.deepEqual(v.manifest.exportedAt, NOW);
  assert.deepEqual(v.manifest.calibration, CAL);
  assert.equal(v.clojureChecker, false);
});

Deno.test("verifyExport() refuses a changed byte at every position of every file", () => {
  const files = smallBundle();
  const text = exportOf(files);
  const enc = new TextEncoder();
  const dec = new TextDecoder(); // not fatal: a broken sequence becomes U+FFFD, still a change
  let tried = 0;
  for (const [path, content] of files) {
    const bytes = enc.encode(content);
    for (let i = 0; i < bytes.length; i++) {
      const changed = bytes.slice();
      changed[i] ^= 0x01;
      const tampered = rewrite(text, (f) => f.set(path, dec.decode(changed)));
      const e = refusal(() => verifyExport(tampered, { file: "t.edn" }));
      assert.equal(e.code, "EXPORT_TAMPERED", `${path} byte ${i}: ${e.message}`);
      assert.match(
        e.message,
        /^The files are not the bundle the manifest names: changed after export/,
      );
      assert.equal(e.details?.manifest, contentId(files));
      assert.notEqual(e.details?.computed, contentId(files));
      tried++;
    }
  }
  assert.ok(tried > 400, `tampered ${tried} bytes`);
});

Deno.test("verifyExport() refuses an added, a removed and a renamed file", () => {
  const text = exportOf();
  const cases: [string, (f: EdnMap) => void][] = [
    ["added", (f) => f.set("fixtures/docs/b.md", "extra")],
    ["added empty", (f) => f.set("README.md", "")],
    ["removed", (f) => f.delete("gold.edn")],
    ["renamed", (f) => {
      f.set("fixtures/docs/A.md", f.get("fixtures/docs/a.md")!);
      f.delete("fixtures/docs/a.md");
    }],
    ["swapped texts", (f) => {
      const a = f.get("gold.edn")!;
      f.set("gold.edn", f.get("fixtures/docs/a.md")!);
      f.set("fixtures/docs/a.md", a);
    }],
  ];
  for (const [label, change] of cases) {
    const e = refusal(() => verifyExport(rewrite(text, change), { file: "t.edn" }));
    assert.equal(e.code, "EXPORT_TAMPERED", `${label}: ${e.message}`);
  }
});

Deno.test("verifyExport() refuses a manifest id changed at any of its characters", () => {
  const text = exportOf();
  const id = contentId(smallBundle());
  for (let i = 0; i < id.length; i++) {
    if (id[i] === "-") continue;
    const other = id[i] === "0" ? "1" : "0";
    const forged = id.slice(0, i) + other + id.slice(i + 1);
    const e = refusal(() =>
      verifyExport(rewrite(text, (_f, m) => m.set(kw("bundle"), forged)), { file: "t.edn" })
    );
    assert.equal(e.code, "EXPORT_TAMPERED");
    assert.equal(e.details?.manifest, forged);
    assert.equal(e.details?.computed, id);
  }
});

Deno.test("verifyExport() never accepts other files: any one character of the export text changed", () => {
  const files = smallBundle();
  const text = exportOf(files);
  let accepted = 0;
  let refused = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    for (const r of [c === 0x78 ? 0x79 : 0x78, c + 1]) {
      const changed = text.slice(0, i) + String.fromCharCode(r) + text.slice(i + 1);
      try {
        const v = verifyExport(changed, { file: "t.edn" });
        // Only what the id does not cover may change: the name, title-free metadata.
        assert.deepEqual([...v.files], [...files].sort(), `position ${i}`);
        assert.equal(v.id, contentId(files));
        accepted++;
      } catch (e) {
        if (!(e instanceof DvergrError)) throw e;
        refused++;
      }
    }
  }
  assert.ok(refused > accepted, `refused ${refused}, accepted ${accepted}`);
});

Deno.test("verifyExport() refuses a manifest :title that is not workflow.edn's", () => {
  const forged = rewrite(exportOf(), (_f, m) => m.set(kw("title"), "Something else"));
  const e = refusal(() => verifyExport(forged, { file: "t.edn" }));
  assert.equal(e.code, "EXPORT_TAMPERED");
  assert.match(e.message, /:title "Something else" but workflow\.edn says "Recall"/);
});

Deno.test("verifyExport() refuses another format, naming it", () => {
  const cases: [string, RegExp][] = [
    [
      rewrite(exportOf(), (_f, m) => m.set(kw("format"), "dvergr-workflow/2")),
      /^Not a workflow export \(format "dvergr-workflow\/2"\)/,
    ],
    [
      rewrite(exportOf(), (_f, m) => m.set(kw("format"), kw("dvergr-workflow"))),
      /^Not a workflow export \(format :dvergr-workflow\)/,
    ],
    [
      rewrite(exportOf(), (_f, m) => m.delete(kw("format"))),
      /^Not a workflow export \(format nil\)/,
    ],
    ['{:files {"a" "b"}}', /^Not a workflow export \(format nil\): it has no :manifest map/],
    ["[1 2 3]", /^Not a workflow export \(format nil\): the file holds a vector, not a map/],
  ];
  for (const [text, message] of cases) {
    const e = refusal(() => verifyExport(text, { file: "t.edn" }));
    assert.equal(e.code, "EXPORT_INVALID");
    assert.match(e.message, message);
    assert.ok(e.hint);
  }
});

Deno.test("verifyExport() names line and column of malformed EDN", () => {
  const text = exportOf();
  const cut = text.slice(0, text.length - 3);
  const e = refusal(() => verifyExport(cut, { file: "cut.edn" }));
  assert.equal(e.code, "EDN_SYNTAX");
  assert.match(e.message, /^Not a workflow export: cut\.edn line \d+, column \d+: /);
  assert.equal(e.details?.file, "cut.edn");
  assert.equal(typeof e.details?.line, "number");
});

Deno.test("verifyExport() refuses a name outside [a-z0-9][a-z0-9-]*, unless imported as another", () => {
  for (const bad of ["Recall", "re_call", "-recall", "re/call", "", "über"]) {
    const text = rewrite(exportOf(), (_f, m) => m.set(kw("name"), bad));
    const e = refusal(() => verifyExport(text, { file: "t.edn" }));
    assert.equal(e.code, "USAGE", bad);
    assert.match(e.message, /a workflow name is lowercase letters, digits and dashes/);
    assert.match(e.hint ?? "", /--as NAME/);
    assert.equal(verifyExport(text, { file: "t.edn", as: "recall-2" }).name, "recall-2");
  }
  const e = refusal(() => verifyExport(exportOf(), { file: "t.edn", as: "../x" }));
  assert.equal(e.code, "USAGE");
});

Deno.test("verifyExport() refuses a malformed bundle whose id matches, listing its problems", () => {
  const files = smallBundle();
  files.set("gold.edn", "{:names [");
  // Written by hand: exportBundle refuses a malformed bundle.
  const text = writeEdn(
    new Map<unknown, unknown>([
      [kw("manifest"), { format: EXPORT_FORMAT, name: "recall", bundle: contentId(files) }],
      [kw("files"), files],
    ]),
  );
  const e = refusal(() => verifyExport(text, { file: "t.edn" }));
  assert.equal(e.code, "BUNDLE_INVALID");
  assert.match(e.message, /bundle "recall" is not well formed: gold\.edn line 1/);
});

Deno.test("verifyExport() refuses file paths that leave the bundle and values that are not text", () => {
  const bad: [string, (f: EdnMap) => void, RegExp][] = [
    ["dotdot", (f) => f.set("../evil.js", "x"), /leaves the bundle/],
    ["absolute", (f) => f.set("/etc/passwd", "x"), /is absolute/],
    ["backslash", (f) => f.set("a\\b", "x"), /backslash/],
    ["git", (f) => f.set("fixtures/.git/config", "[core]\n fsmonitor = evil"), /\.git/],
    ["git dot", (f) => f.set("fixtures/.git./config", "x"), /\.git/],
    ["git short name", (f) => f.set("fixtures/git~1/config", "x"), /\.git/],
    ["file and directory", (f) => {
      f.set("fixtures/docs", "a file");
      f.set("fixtures/docs/more.md", "below it");
    }, /"fixtures\/docs" is a file and also the directory of "fixtures\/docs\//],
    ["number", (f) => f.set("n.txt", 3), /is a number, not text/],
    ["keyword key", (f) => f.set(kw("x"), "y"), /has the key :x, not a path string/],
  ];
  for (const [label, change, message] of bad) {
    const e = refusal(() => verifyExport(rewrite(exportOf(), change), { file: "t.edn" }));
    assert.equal(e.code, "EXPORT_INVALID", label);
    assert.match(e.message, message, `${label}: ${e.message}`);
  }
});

Deno.test("verifyExport() refuses file texts and paths with an unpaired surrogate (not UTF-8 text), though their id matches", () => {
  // A lone surrogate cannot be stored as UTF-8: a room would hold U+FFFD instead, a bundle
  // with another id than the one verified (and hasch on the JVM writes "?" for it).
  const cases: [string, FileMap][] = [
    ["text", recallBundle({ "fixtures/docs/a.md": "Wato \ud800 Dust" })],
    ["low half", recallBundle({ "fixtures/docs/a.md": "Wato \udc00" })],
    ["path", recallBundle({ "fixtures/docs/\udfff.md": "x" })],
  ];
  for (const [label, files] of cases) {
    const text = exportOf(files);
    assert.match(text, /\\ud[8c-f]00|\\udfff/, `${label}: the export escapes it`);
    const e = refusal(() => verifyExport(text, { file: "t.edn" }));
    assert.equal(e.code, "EXPORT_INVALID", label);
    assert.match(e.message, /unpaired surrogate/, label);
    assert.ok(e.hint, label);
  }
  // A well-formed pair written as two escapes is one character, and verifies.
  const pair = recallBundle({ "fixtures/docs/a.md": "ok \ud83d\ude42" });
  assert.equal(verifyExport(exportOf(pair), { file: "t.edn" }).id, contentId(pair));
});

Deno.test("verifyExport() refuses a path segment longer than 255 bytes (no file system holds it); 255 pass", () => {
  const ok = recallBundle({ [`fixtures/${"a".repeat(252)}.md`]: "x" });
  assert.equal(verifyExport(exportOf(ok), { file: "t.edn" }).id, contentId(ok));
  for (
    const [label, path] of [
      ["ASCII", `fixtures/${"a".repeat(253)}.md`],
      ["two-byte characters", `fixtures/${"ä".repeat(128)}`],
      ["directory", `${"d".repeat(300)}/a.md`],
    ]
  ) {
    const e = refusal(() =>
      verifyExport(exportOf(recallBundle({ [path]: "x" })), { file: "t.edn" })
    );
    assert.equal(e.code, "EXPORT_INVALID", label);
    assert.match(e.message, /longer than 255 bytes/, label);
  }
  // The name becomes a directory too.
  const long = refusal(() => verifyExport(exportOf(), { file: "t.edn", as: "n".repeat(256) }));
  assert.equal(long.code, "USAGE");
  assert.match(long.message, /at most 255/);
});

/**
 * An export as the earlier system writes it (pr-str of the map: commas, #inst with
 * -00:00), with a Clojure checker. Its files are docs/compatibility.md §3.2's test vector, whose id
 * hasch gives as 2009b08f-92a1-5af7-8637-bf82ff4c0e6d.
 */
const CLOJURE_EXPORT = await Deno.readTextFile(
  new URL("../../fixtures/exports/tiny_clojure.edn", import.meta.url),
);

Deno.test("verifyExport() accepts an export of the earlier system with a Clojure checker", () => {
  const v = verifyExport(CLOJURE_EXPORT, { file: "tiny.edn" });
  assert.equal(v.id, "2009b08f-92a1-5af7-8637-bf82ff4c0e6d");
  assert.equal(contentId(v.files), v.id);
  assert.equal(v.name, "tiny");
  assert.equal(v.clojureChecker, true);
  assert.equal(hasOnlyClojureChecker(v.files), true);
  assert.equal(v.manifest.dvergrVersion, "dev");
  assert.deepEqual(v.manifest.exportedAt, new Date("2026-09-28T10:00:00.000Z"));
  assert.deepEqual(v.manifest.calibration, {
    ok: false,
    problems: ["calibration.edn has no :reference answer"],
  });
  // A byte changed in its checker is still refused.
  const e = refusal(() =>
    verifyExport(CLOJURE_EXPORT.replace(":reward 1.0", ":reward 0.9"), { file: "t.edn" })
  );
  assert.equal(e.code, "EXPORT_TAMPERED");
});

Deno.test("verifyExport() keeps calibration problems the earlier system printed as a list (a lazy seq)", () => {
  // pr-str prints a lazy seq (map, concat, for) as a list: ("…" "…").
  const text = CLOJURE_EXPORT.replace(
    '["calibration.edn has no :reference answer"]',
    '("the reference fails [:a]" "empty does not score below the reference")',
  );
  assert.notEqual(text, CLOJURE_EXPORT);
  const v = verifyExport(text, { file: "t.edn" });
  assert.deepEqual(v.manifest.calibration, {
    ok: false,
    problems: ["the reference fails [:a]", "empty does not score below the reference"],
  });
});

Deno.test("exportBundle() re-exports a Clojure bundle to the same id; refuses malformed bundles and bad names", () => {
  const v = verifyExport(CLOJURE_EXPORT, { file: "tiny.edn" });
  const again = exportBundle({ name: "tiny", files: v.files }, { ok: false, problems: ["x"] }, {
    version: "0.1.0",
    now: NOW,
  });
  assert.equal(verifyExport(again, { file: "again.edn" }).id, v.id);

  const broken = smallBundle();
  broken.delete("checker.js");
  const e = refusal(() =>
    exportBundle({ name: "recall", files: broken }, CAL, { version: "x", now: NOW })
  );
  assert.equal(e.code, "BUNDLE_INVALID");
  assert.match(e.message, /^Cannot export bundle "recall": it is not well formed: checker\.js/);

  const n = refusal(() =>
    exportBundle({ name: "My Bundle", files: smallBundle() }, CAL, { version: "x", now: NOW })
  );
  assert.equal(n.code, "USAGE");
  assert.match(n.hint ?? "", /rename the directory/);
});
