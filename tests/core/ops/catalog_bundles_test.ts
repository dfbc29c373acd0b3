import assert from "node:assert/strict";
import { join } from "node:path";
import { openHome } from "../../../adapters/store/kv/home.ts";
import { type Home } from "../../../core/ports/home.ts";
import type { OpContext } from "../../../core/ops/op.ts";
import { callOp } from "../../../core/ops/registry.ts";
import { roomCreate, roomLog, roomWrite } from "../../../core/ops/rooms.ts";
import {
  catalogExport,
  catalogImport,
  catalogList,
  catalogPromote,
  importIntoDir,
} from "../../../core/ops/catalog_bundles.ts";
import { DvergrError } from "../../../core/errors.ts";
import { contentId } from "../../../core/bundle/content_id.ts";
import type { FileMap } from "../../../core/bundle/file_map.ts";
import { readBundleDir } from "../../../adapters/files/bundle_dir.ts";
import { readRoomBundle } from "../../../core/ops/room_bundles.ts";
import { benchmarkBundle } from "../../../core/engine/benchmark.ts";
import { candidateKinds } from "../../../adapters/candidates/registry.ts";
import { createCheckerPool } from "../../../sandbox/checker_pool.ts";
import { catalogCheck } from "../../../core/ops/catalog_run.ts";
import { recallBundle } from "../../helpers/bundles.ts";
import { RESULT_LIMIT } from "../../../mcp/result.ts";
import { composeServices } from "../../../adapters/compose.ts";
import { fileBundleDirs } from "../../../adapters/files/bundle_dirs.ts";

const CLOJURE_EXPORT = await Deno.readTextFile(
  new URL("../../fixtures/exports/tiny_clojure.edn", import.meta.url),
);
/** An earlier-system-style export whose checker.clj calibrates (written for these tests). */
const CALIBRATED_CLOJURE_EXPORT = await Deno.readTextFile(
  new URL("../../fixtures/exports/invoice_clojure.edn", import.meta.url),
);

async function withHome(
  f: (ctx: OpContext, home: Home) => Promise<void>,
  clock = () => new Date("2026-10-01T12:00:00Z"),
): Promise<void> {
  const home = await openHome(await Deno.makeTempDir({ prefix: "dvergr-catalog-" }));
  const runner = createCheckerPool({ workers: 1 });
  const ctx: OpContext = {
    home,
    services: composeServices(),
    runner,
    env: () => undefined,
    cwd: Deno.cwd(),
    clock,
  };
  try {
    await f(ctx, home);
  } finally {
    runner.close();
    await home.close();
    await Deno.remove(home.dir, { recursive: true });
  }
}

/** Writes a bundle into workflows/<name>/ of a room (created when missing). */
async function putBundle(ctx: OpContext, room: string, name: string, files: FileMap) {
  await callOp(roomCreate, ctx, { room });
  const out: Record<string, string> = {};
  for (const [p, t] of files) out[`workflows/${name}/${p}`] = t;
  await callOp(roomWrite, ctx, { room, files: out });
}

async function commits(ctx: OpContext, room: string): Promise<number> {
  return (await callOp(roomLog, ctx, { room })).total;
}

async function rejects(p: Promise<unknown>, code: string, message?: RegExp): Promise<DvergrError> {
  try {
    await p;
  } catch (e) {
    if (!(e instanceof DvergrError)) throw e;
    assert.equal(e.code, code, e.message);
    if (message) assert.match(e.message, message);
    assert.ok(e.hint);
    return e;
  }
  assert.fail(`expected ${code}`);
}

Deno.test("catalog_export → catalog_import: same id, exactly one commit, a second import changes nothing", async () => {
  await withHome(async (ctx) => {
    const files = recallBundle();
    await putBundle(ctx, "src", "recall", files);
    const exp = await callOp(catalogExport, ctx, { room: "src", name: "recall" });
    assert.equal(exp.bundleId, contentId(files));
    assert.deepEqual(exp.calibration, { ok: true, problems: [] });
    assert.match(exp.export, /^\{:manifest \{:format "dvergr-workflow\/1",/);

    await callOp(roomCreate, ctx, { room: "dst" });
    const before = await commits(ctx, "dst");
    const imp = await callOp(catalogImport, ctx, { room: "dst", export: exp.export });
    assert.equal(imp.bundleId, exp.bundleId);
    assert.equal(imp.bundle, "recall");
    assert.equal(imp.unchanged, false);
    assert.equal(await commits(ctx, "dst"), before + 1, "one commit per import");
    const log = await callOp(roomLog, ctx, { room: "dst", limit: 1 });
    assert.equal(log.commits[0].id, imp.commit);
    assert.match(log.commits[0].message, new RegExp(`^Import recall \\(${exp.bundleId}\\)`));
    const installed = await readRoomBundle(ctx.home.rooms, "dst", "recall");
    assert.equal(contentId(installed.files), exp.bundleId);

    const again = await callOp(catalogImport, ctx, { room: "dst", export: exp.export });
    assert.equal(again.unchanged, true);
    assert.equal(again.commit, null);
    assert.equal(await commits(ctx, "dst"), before + 1, "no commit for the same bundle");

    // --as: the same content under another name, one more commit.
    const renamed = await callOp(catalogImport, ctx, {
      room: "dst",
      export: exp.export,
      as: "recall-copy",
    });
    assert.equal(renamed.bundleId, exp.bundleId);
    assert.equal(await commits(ctx, "dst"), before + 2);
  });
});

type ExportPage = Awaited<ReturnType<typeof catalogExport.handler>>;

Deno.test("catalog_export gives a big export in pages that fit a tool result; concatenated they import", async () => {
  // Fixtures full of quotes, backslashes and line breaks: escaped twice (EDN, then JSON),
  // the export's JSON is far longer than the export.
  const big: Record<string, string> = {};
  for (let i = 0; i < 40; i++) {
    big[`fixtures/docs/${i}.md`] = `"Wato" \\ 'Dust' \u00e4\n\t\u{1F642}\n`.repeat(300);
  }
  await withHome(async (ctx) => {
    await putBundle(ctx, "src", "big", recallBundle(big));
    const pages: string[] = [];
    let offset: number | null = 0;
    let at: string | undefined;
    let total = 0;
    while (offset !== null) {
      const page: ExportPage = await callOp(
        catalogExport,
        ctx,
        { room: "src", name: "big", offset, ...(at ? { exported_at: at } : {}) },
      );
      assert.ok(
        JSON.stringify(page).length <= RESULT_LIMIT,
        `page at ${offset}: ${JSON.stringify(page).length} chars of JSON`,
      );
      assert.equal(page.offset, offset);
      at = page.exportedAt;
      total = page.exportChars;
      pages.push(page.export);
      offset = page.nextOffset;
      assert.ok(pages.length < 100, "the pages end");
    }
    assert.ok(pages.length > 3, `${pages.length} pages`);
    const text = pages.join("");
    assert.equal(text.length, total);
    assert.ok(text.isWellFormed(), "no page splits a surrogate pair");

    await callOp(roomCreate, ctx, { room: "dst" });
    const n = await commits(ctx, "dst");
    const imp = await callOp(catalogImport, ctx, { room: "dst", export: text });
    assert.equal(imp.bundleId, contentId(recallBundle(big)));
    assert.equal(await commits(ctx, "dst"), n + 1);

    // A later page needs the first page's time, so that the pages are of one export.
    await rejects(
      callOp(catalogExport, ctx, { room: "src", name: "big", offset: 10 }),
      "USAGE",
      /exported_at/,
    );
    await rejects(
      callOp(catalogExport, ctx, { room: "src", name: "big", offset: total + 1, exported_at: at }),
      "USAGE",
      /offset/,
    );
    // A small export is one page, as before.
    await putBundle(ctx, "src", "recall", recallBundle());
    const one = await callOp(catalogExport, ctx, { room: "src", name: "recall" });
    assert.equal(one.nextOffset, null);
    assert.equal(one.export.length, one.exportChars);
  });
});

Deno.test("catalog_import refuses a target holding other files unless force, which replaces it whole", async () => {
  await withHome(async (ctx) => {
    await putBundle(ctx, "src", "recall", recallBundle());
    const { export: text, bundleId: bundle } = await callOp(catalogExport, ctx, {
      room: "src",
      name: "recall",
    });
    // The destination has a different recall, with a file the export lacks.
    await putBundle(
      ctx,
      "dst",
      "recall",
      recallBundle({ "gold.edn": '{:names ["Wato"]}', "stale.md": "old" }),
    );
    const n = await commits(ctx, "dst");
    const e = await rejects(
      callOp(catalogImport, ctx, { room: "dst", export: text }),
      "TARGET_EXISTS",
      /workflows\/recall\/ already holds other files/,
    );
    assert.match(e.hint!, /--as NAME.*--force/);
    assert.equal(await commits(ctx, "dst"), n, "nothing written");

    const forced = await callOp(catalogImport, ctx, { room: "dst", export: text, force: true });
    assert.equal(forced.replaced, true);
    assert.equal(await commits(ctx, "dst"), n + 1, "one commit");
    const installed = await readRoomBundle(ctx.home.rooms, "dst", "recall");
    assert.equal(installed.files.has("stale.md"), false, "stale files removed");
    assert.equal(contentId(installed.files), bundle);
  });
});

Deno.test("catalog_import refuses a file where its directory would go (workflows/<name> or workflows) unless force", async () => {
  await withHome(async (ctx) => {
    await putBundle(ctx, "src", "recall", recallBundle());
    const { export: text, bundleId: bundle } = await callOp(catalogExport, ctx, {
      room: "src",
      name: "recall",
    });
    for (const blocker of ["workflows/recall", "workflows"]) {
      const room = blocker === "workflows" ? "root" : "named";
      await callOp(roomCreate, ctx, { room });
      await callOp(roomWrite, ctx, { room, files: { [blocker]: "notes, not a bundle" } });
      const n = await commits(ctx, room);
      const e = await rejects(
        callOp(catalogImport, ctx, { room, export: text }),
        "TARGET_EXISTS",
        new RegExp(`${blocker} is a file`),
      );
      assert.match(e.hint!, /--force/);
      assert.equal(await commits(ctx, room), n, `${blocker}: nothing written`);
      const kept = await ctx.home.rooms.readFiles(room);
      assert.equal(kept.get(blocker), "notes, not a bundle", `${blocker}: the file is kept`);

      const forced = await callOp(catalogImport, ctx, { room, export: text, force: true });
      assert.equal(forced.replaced, true, blocker);
      assert.equal(await commits(ctx, room), n + 1, `${blocker}: one commit`);
      const installed = await readRoomBundle(ctx.home.rooms, room, "recall");
      assert.equal(contentId(installed.files), bundle, blocker);
    }
  });
});

Deno.test("catalog_import: of two concurrent imports of different bundles under one name, one is refused", async () => {
  await withHome(async (ctx) => {
    await putBundle(ctx, "src", "a", recallBundle({ "gold.edn": '{:names ["A"]}' }));
    await putBundle(ctx, "src", "b", recallBundle({ "gold.edn": '{:names ["B"]}' }));
    const a = (await callOp(catalogExport, ctx, { room: "src", name: "a" })).export;
    const b = (await callOp(catalogExport, ctx, { room: "src", name: "b" })).export;
    await callOp(roomCreate, ctx, { room: "dst" });
    const n = await commits(ctx, "dst");
    const settled = await Promise.allSettled([
      callOp(catalogImport, ctx, { room: "dst", export: a, as: "x" }),
      callOp(catalogImport, ctx, { room: "dst", export: b, as: "x" }),
    ]);
    const refused = settled.filter((r) => r.status === "rejected");
    assert.equal(refused.length, 1, JSON.stringify(settled.map((r) => r.status)));
    assert.equal(
      ((refused[0] as PromiseRejectedResult).reason as DvergrError).code,
      "TARGET_EXISTS",
    );
    assert.equal(await commits(ctx, "dst"), n + 1, "one commit, for the import that won");
  });
});

Deno.test("catalog_import refuses tampered and foreign exports, committing nothing", async () => {
  await withHome(async (ctx) => {
    await putBundle(ctx, "src", "recall", recallBundle());
    const { export: text } = await callOp(catalogExport, ctx, { room: "src", name: "recall" });
    await callOp(roomCreate, ctx, { room: "dst" });
    const cases: [string, string, RegExp][] = [
      [
        text.replace("Wato and Dust", "Wato and Rust"),
        "EXPORT_TAMPERED",
        /not the bundle the manifest names/,
      ],
      [text.replace("dvergr-workflow/1", "dvergr-workflow/9"), "EXPORT_INVALID", /format/],
      [text.replace(':name "recall"', ':name "Recall!"'), "USAGE", /workflow name/],
      [text.slice(0, 200), "EDN_SYNTAX", /line \d+, column \d+/],
    ];
    for (const [bad, code, message] of cases) {
      await rejects(callOp(catalogImport, ctx, { room: "dst", export: bad }), code, message);
    }
    await rejects(
      callOp(catalogImport, ctx, { room: "dst", export: text, as: "Bad Name" }),
      "USAGE",
    );
    assert.equal(await commits(ctx, "dst"), 1, "only the room's creation");
    await rejects(
      callOp(catalogImport, ctx, { room: "missing", export: text }),
      "NOT_FOUND",
      /no such room/,
    );
  });
});

Deno.test("catalog_import installs an export of the earlier system (Clojure checker); without a calibration it is not promoted", async () => {
  await withHome(async (ctx) => {
    await callOp(roomCreate, ctx, { room: "r" });
    const imp = await callOp(catalogImport, ctx, { room: "r", export: CLOJURE_EXPORT });
    assert.equal(imp.bundleId, "2009b08f-92a1-5af7-8637-bf82ff4c0e6d");
    assert.equal(imp.clojureChecker, true);
    assert.match(imp.notes[0], /checker\.clj .*runs in the Clojure sandbox/);
    assert.equal(await commits(ctx, "r"), 2);
    const { rooms } = await callOp(catalogList, ctx, { room: "r" });
    assert.deepEqual(
      rooms[0].bundles.map((b) => [b.bundle, b.bundleId, b.tier, b.problems, b.clojureChecker]),
      [["tiny", "2009b08f-92a1-5af7-8637-bf82ff4c0e6d", "ad-hoc", 0, true]],
    );
    // It has no calibration.edn, so it does not calibrate and is not promoted.
    const p = await callOp(catalogPromote, ctx, { room: "r", name: "tiny" });
    assert.equal(p.promoted, false);
    assert.match(p.calibration.problems[0], /no calibration\.edn/);
    assert.equal(await ctx.home.state.promotion(imp.bundleId), null);
    // It exports again to the same id.
    const again = await callOp(catalogExport, ctx, { room: "r", name: "tiny" });
    assert.equal(again.bundleId, imp.bundleId);
    assert.equal(again.calibration.ok, false);
  });
});

Deno.test("catalog_list shows every room's bundles with content id and tier; promotion makes it room under any name", async () => {
  await withHome(async (ctx) => {
    const files = recallBundle();
    await putBundle(ctx, "a", "recall", files);
    await putBundle(ctx, "b", "same-content", files);
    await putBundle(ctx, "b", "broken", recallBundle({ "checker.js": null }));
    // A directory without workflow.edn is not a bundle.
    await callOp(roomWrite, ctx, { room: "b", files: { "workflows/notes/readme.md": "x" } });

    const tiers = async () =>
      (await callOp(catalogList, ctx, {})).rooms.flatMap((r) =>
        r.bundles.map((b) => `${r.room}/${b.bundle} ${b.tier} ${b.problems}`)
      );
    assert.deepEqual(await tiers(), [
      "a/recall ad-hoc 0",
      "b/broken ad-hoc 1",
      "b/same-content ad-hoc 0",
    ]);

    const p = await callOp(catalogPromote, ctx, { room: "a", name: "recall" });
    assert.equal(p.promoted, true);
    assert.equal(p.tier, "room");
    assert.deepEqual(await ctx.home.state.promotion(contentId(files)), {
      room: "a",
      name: "recall",
      at: "2026-10-01T12:00:00.000Z",
    });
    assert.deepEqual(await tiers(), [
      "a/recall room 0",
      "b/broken ad-hoc 1",
      "b/same-content room 0",
    ]);
    const entry = (await callOp(catalogList, ctx, { room: "a" })).rooms[0].bundles[0];
    assert.equal(entry.bundleId, contentId(files));
    assert.equal(entry.title, "Recall");

    // Promoting the same content again keeps the first record.
    const again = await callOp(catalogPromote, ctx, { room: "b", name: "same-content" });
    assert.equal(again.promoted, true);
    assert.equal(again.previous?.bundle, "recall");

    // A changed byte is a new id: ad-hoc again.
    await callOp(roomWrite, ctx, {
      room: "a",
      files: { "workflows/recall/fixtures/docs/a.md": "Wato and Dust are products!" },
    });
    assert.deepEqual(await tiers(), [
      "a/recall ad-hoc 0",
      "b/broken ad-hoc 1",
      "b/same-content room 0",
    ]);
    await rejects(callOp(catalogPromote, ctx, { room: "b", name: "broken" }), "BUNDLE_INVALID");
    await rejects(
      callOp(catalogPromote, ctx, { room: "b", name: "nope" }),
      "NOT_FOUND",
      /no workflow nope/,
    );
  });
});

Deno.test("catalog_promote does not promote a bundle that does not calibrate", async () => {
  await withHome(async (ctx) => {
    // The damaged variant keeps every check: the checker does not notice the damage.
    const files = recallBundle({
      "calibration.edn": `{:reference {"/out/list.md" "Wato, Dust"}
 :damaged {:same {:files {"/out/list.md" "Wato, Dust"} :loses [:found-all]}}}`,
    });
    await putBundle(ctx, "r", "weak", files);
    const p = await callOp(catalogPromote, ctx, { room: "r", name: "weak" });
    assert.equal(p.promoted, false);
    assert.equal(p.calibration.ok, false);
    assert.match(p.calibration.problems.join("\n"), /same still passes \[:found-all\]/);
    assert.equal(p.tier, "ad-hoc");
    assert.equal(await ctx.home.state.promotion(contentId(files)), null);

    await putBundle(ctx, "r", "uncalibrated", recallBundle({ "calibration.edn": null }));
    const q = await callOp(catalogPromote, ctx, { room: "r", name: "uncalibrated" });
    assert.equal(q.promoted, false);
    assert.match(q.calibration.problems[0], /no calibration\.edn/);
  });
});

Deno.test("trust does not travel: a promoted bundle imported into another home is ad-hoc there", async () => {
  let text = "";
  await withHome(async (ctx) => {
    await putBundle(ctx, "r", "recall", recallBundle());
    await callOp(catalogPromote, ctx, { room: "r", name: "recall" });
    const exp = await callOp(catalogExport, ctx, { room: "r", name: "recall" });
    text = exp.export;
  });
  await withHome(async (ctx) => {
    await callOp(roomCreate, ctx, { room: "r" });
    const imp = await callOp(catalogImport, ctx, { room: "r", export: text });
    assert.equal(imp.tier, "ad-hoc");
    assert.equal(
      imp.manifest.calibration && (imp.manifest.calibration as { ok: boolean }).ok,
      true,
    );
  });
});

Deno.test("importIntoDir() writes the bundle directory atomically; directory → export → directory keeps the id", async () => {
  await withHome(async (ctx) => {
    await putBundle(ctx, "r", "recall", recallBundle());
    const { export: text, bundleId: bundle } = await callOp(catalogExport, ctx, {
      room: "r",
      name: "recall",
    });
    const base = await Deno.makeTempDir();
    const dir = join(base, "recall");
    const out = await importIntoDir({ text, file: "x.edn", dir }, fileBundleDirs);
    assert.equal(out.bundleId, bundle);
    const back = await readBundleDir(dir);
    assert.equal(contentId(back.files), bundle);

    assert.equal(
      (await importIntoDir({ text, file: "x.edn", dir }, fileBundleDirs)).unchanged,
      true,
    );
    await Deno.writeTextFile(join(dir, "extra.md"), "x");
    await rejects(importIntoDir({ text, file: "x.edn", dir }, fileBundleDirs), "TARGET_EXISTS");
    const forced = await importIntoDir({ text, file: "x.edn", dir, force: true }, fileBundleDirs);
    assert.equal(forced.replaced, true);
    assert.equal(contentId((await readBundleDir(dir)).files), bundle);

    await rejects(
      importIntoDir(
        { text: text.replace("Recall", "Recal"), file: "x.edn", dir: join(base, "t") },
        fileBundleDirs,
      ),
      "EXPORT_TAMPERED",
    );
    await assert.rejects(() => Deno.stat(join(base, "t")), Deno.errors.NotFound);
    await Deno.remove(base, { recursive: true });
  });
});

Deno.test("importIntoDir() refuses a directory it cannot make (below a file) with USAGE", async () => {
  const text = CLOJURE_EXPORT;
  const base = await Deno.makeTempDir();
  try {
    await Deno.writeTextFile(join(base, "afile"), "x");
    const targets = [join(base, "afile", "sub"), join(base, "afile", "deeper", "sub")];
    for (const dir of targets) {
      const e = await rejects(
        importIntoDir({ text, file: "x.edn", dir }, fileBundleDirs),
        "USAGE",
        /Cannot write/,
      );
      assert.match(e.message, new RegExp(dir.replaceAll("/", "\\/")), dir);
    }
    assert.equal(await Deno.readTextFile(join(base, "afile")), "x");
  } finally {
    await Deno.remove(base, { recursive: true });
  }
});

Deno.test("every attempt and the scorecard carry the tier: promoted → room, a changed byte → ad-hoc", async () => {
  await withHome(async (ctx, home) => {
    const files = recallBundle();
    await putBundle(ctx, "r", "recall", files);
    await callOp(catalogPromote, ctx, { room: "r", name: "recall" });
    const run = async () =>
      await benchmarkBundle({
        services: composeServices(),
        bundle: await readRoomBundle(home.rooms, "r", "recall"),
        room: "r",
        specs: ["builtin:reference", "builtin:noop"].map(candidateKinds.parse),
        home,
        runner: ctx.runner,
        env: () => undefined,
        isolation: "none",
      });
    const before = await commits(ctx, "r");
    const first = await run();
    assert.equal(first.room, "r");
    assert.equal(first.commit, null, "the bundle was already in its room");
    assert.equal(await commits(ctx, "r"), before);
    assert.equal(first.scorecard.trust, "room");
    const records = await home.state.attemptHistory(first.plan.id);
    assert.ok(records.length >= 2);
    assert.ok(records.every((r) => r.trust === "room"));

    await callOp(roomWrite, ctx, {
      room: "r",
      files: { "workflows/recall/gold.edn": '{:names ["Wato" "Dust"]} ' },
    });
    const second = await run();
    assert.notEqual(second.bundle.id, first.bundle.id);
    assert.equal(second.scorecard.trust, "ad-hoc");
    const changed = await home.state.attemptHistory(second.plan.id);
    assert.ok(changed.length >= 2 && changed.every((r) => r.trust === "ad-hoc"));
  });
});

Deno.test("an earlier system's export with checker.clj imports, calibrates, promotes, checks and benchmarks", async () => {
  await withHome(async (ctx, home) => {
    await callOp(roomCreate, ctx, { room: "old" });
    const imp = await callOp(catalogImport, ctx, {
      room: "old",
      export: CALIBRATED_CLOJURE_EXPORT,
    });
    assert.equal(imp.clojureChecker, true);
    const shape = await callOp(catalogCheck, ctx, { room: "old", name: "invoice-totals" }) as {
      checker: string;
      warnings: unknown[];
    };
    assert.equal(shape.checker, "checker.clj");
    assert.deepEqual(shape.warnings, []);
    const p = await callOp(catalogPromote, ctx, { room: "old", name: "invoice-totals" });
    assert.deepEqual(p.calibration.problems, []);
    assert.equal(p.promoted, true);
    const checked = await callOp(catalogCheck, ctx, {
      room: "old",
      name: "invoice-totals",
      answer: { "/out/answer.edn": '{:total "119,00" :currency :usd}' },
    }) as { verdict: { run: { ok: boolean; verdict: { checks: Record<string, boolean> } } } };
    assert.equal(checked.verdict.run.ok, true);
    assert.deepEqual(checked.verdict.run.verdict.checks, {
      "answer?": true,
      "total?": true,
      "currency?": false,
    });
    const r = await benchmarkBundle({
      services: composeServices(),
      bundle: await readRoomBundle(home.rooms, "old", "invoice-totals"),
      room: "old",
      specs: ["builtin:reference", "builtin:noop"].map(candidateKinds.parse),
      home,
      runner: ctx.runner,
      env: () => undefined,
      isolation: "none",
    });
    const rows = Object.fromEntries(r.scorecard.candidates.map((c) => [c.candidate, c]));
    assert.equal(r.scorecard.complete, true);
    assert.equal(rows["builtin:reference"].passRate, 1);
    assert.equal(rows["builtin:noop"].passRate, 0);
    assert.equal(r.scorecard.trust, "room");
  });
});
