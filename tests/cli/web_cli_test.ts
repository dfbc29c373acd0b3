import assert from "node:assert/strict";
import { join } from "node:path";
import { memoryContext } from "../../cli/context.ts";
import { runMain } from "../../main.ts";
import { readBundleDir, writeTree } from "../../adapters/files/bundle_dir.ts";
import { openHome } from "../../adapters/store/kv/home.ts";
import { syncBundle } from "../../core/ports/room_store.ts";
import { callOp, findOp } from "../../core/ops/registry.ts";
import { createCheckerPool } from "../../sandbox/checker_pool.ts";
import { composeServices } from "../../adapters/compose.ts";

const RIVALS = new URL("../../examples/workflows/tool-rivals", import.meta.url).pathname;

async function dvergr(...args: string[]) {
  const ctx = memoryContext();
  const code = await runMain(args, ctx);
  return { code, out: ctx.out.join(""), err: ctx.err.join("") };
}

const ANSWER =
  `[{:name "Bolt Hardware" :url "https://bolt-hardware.example/" :quote "cordless drills and saws for every carpenter's workshop"}]`;

Deno.test("dvergr check and calibrate pass on examples/workflows/tool-rivals, offline", async () => {
  assert.equal((await dvergr("check", RIVALS)).code, 0);
  const cal = await dvergr("calibrate", RIVALS);
  assert.equal(cal.code, 0, cal.out + cal.err);
  assert.match(cal.out, /^calibrated: /m);
});

Deno.test("dvergr check --answer takes --fetched and --judgements as the checker's fetched and judgements", async () => {
  const dir = await Deno.makeTempDir();
  try {
    await writeTree(join(dir, "answer"), new Map([["out/rivals.edn", ANSWER]]));
    await Deno.writeTextFile(
      join(dir, "fetched.edn"),
      `{"https://bolt-hardware.example/" "Bolt Hardware: cordless drills and saws for every carpenter's workshop since 1999."}`,
    );
    await Deno.writeTextFile(join(dir, "judgements.edn"), `{"bolt hardware" "Yes."}`);
    const grade = async (...extra: string[]) => {
      const r = await dvergr("check", RIVALS, "--answer", join(dir, "answer"), ...extra, "--json");
      assert.equal(r.code, 0, r.out + r.err);
      return JSON.parse(r.out).verdict.run.verdict.checks;
    };
    const both = await grade(
      "--fetched",
      join(dir, "fetched.edn"),
      "--judgements",
      join(dir, "judgements.edn"),
    );
    assert.equal(both["every-quote-fetched?"], true);
    assert.equal(both["all-relevant?"], true);
    const neither = await grade();
    assert.equal(neither["every-quote-fetched?"], false);
    assert.equal(neither["all-relevant?"], false);

    const alone = await dvergr("check", RIVALS, "--fetched", join(dir, "fetched.edn"));
    assert.equal(alone.code, 2);
    assert.match(alone.err, /--fetched needs --answer DIR/);
    await Deno.writeTextFile(join(dir, "bad.edn"), `{"a" 1}`);
    const bad = await dvergr(
      "check",
      RIVALS,
      "--answer",
      join(dir, "answer"),
      "--judgements",
      join(dir, "bad.edn"),
    );
    assert.equal(bad.code, 2);
    assert.match(bad.err, /--judgements file .*bad\.edn": the value of "a" is not a string/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("dvergr freeze exits 1 with 'Nothing to freeze: no fetched pages' when no attempt fetched anything", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const live = join(dir, "rivals");
    await writeTree(
      live,
      new Map([
        ["workflow.edn", '{:title "R" :task "t" :fetched true}'],
        ["checker.js", "export function check() { return { checks: {}, reward: 1 }; }"],
        ["fixtures/docs/a.md", "a"],
      ]),
    );
    const home = join(dir, "home");
    const none = await dvergr("freeze", live, "--home", home);
    assert.equal(none.code, 1);
    assert.match(none.err, /Nothing to freeze: no fetched pages/);
    // A benchmark whose attempts fetched nothing leaves nothing to freeze either.
    const bench = await dvergr("benchmark", live, "--home", home, "--candidate", "builtin:noop");
    assert.equal(bench.code, 0, bench.err);
    const after = await dvergr("freeze", live, "--home", home, "--json");
    assert.equal(after.code, 1);
    assert.match(after.out + after.err, /Nothing to freeze: no fetched pages/);
    assert.equal(await Deno.stat(join(dir, "rivals-frozen")).catch(() => null), null);
    const self = await dvergr("freeze", live, "--home", home, "--as", "rivals");
    assert.equal(self.code, 2);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("dvergr benchmark names the judge when its model is unknown, before any cell", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const b = join(dir, "judged");
    await writeTree(
      b,
      new Map([
        ["workflow.edn", '{:title "J" :task "t" :judge {:model "no-such-model"}}'],
        ["checker.js", "export function check() { return { checks: {}, reward: 1 }; }"],
        ["fixtures/docs/a.md", "a"],
      ]),
    );
    const r = await dvergr(
      "benchmark",
      b,
      "--home",
      join(dir, "home"),
      "--candidate",
      "builtin:noop",
    );
    assert.equal(r.code, 2);
    assert.match(
      r.err,
      /Cannot use the judge of bundle "judged" \(:judge :model "no-such-model"\)/,
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("catalog_check grades an answer with the fetched pages and judgements given", async () => {
  const dir = await Deno.makeTempDir();
  const home = await openHome(join(dir, "home"));
  try {
    await home.rooms.createRoom("web");
    await syncBundle(home.rooms, "web", "tool-rivals", (await readBundleDir(RIVALS)).files);
    const ctx = {
      home,
      services: composeServices(),
      runner: createCheckerPool({ workers: 1 }),
      env: () => undefined,
      cwd: dir,
      clock: () => new Date(),
    };
    try {
      const check = (extra: Record<string, unknown>) =>
        callOp(findOp("catalog_check"), ctx, {
          room: "web",
          name: "tool-rivals",
          answer: { "/out/rivals.edn": ANSWER },
          ...extra,
        }) as Promise<
          { verdict: { run: { ok: true; verdict: { checks: Record<string, boolean> } } } }
        >;
      const both = await check({
        fetched: {
          "https://bolt-hardware.example/":
            "Bolt Hardware: cordless drills and saws for every carpenter's workshop since 1999.",
        },
        judgements: { "bolt hardware": "Yes." },
      });
      assert.equal(both.verdict.run.verdict.checks["every-quote-fetched?"], true);
      assert.equal(both.verdict.run.verdict.checks["all-relevant?"], true);
      const none = await check({});
      assert.equal(none.verdict.run.verdict.checks["every-quote-fetched?"], false);
      await assert.rejects(
        callOp(findOp("catalog_check"), ctx, {
          room: "web",
          name: "tool-rivals",
          judgements: {},
        }),
        /Cannot use fetched or judgements without an answer/,
      );
    } finally {
      ctx.runner.close();
    }
  } finally {
    await home.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("dvergr benchmark of a judged bundle needs the judge's key even for built-in candidates, before any cell", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const ctx = memoryContext({ env: {} });
    const code = await runMain(
      ["benchmark", RIVALS, "--home", join(dir, "home"), "--candidate", "builtin:reference"],
      ctx,
    );
    assert.equal(code, 2);
    assert.match(
      ctx.err.join(""),
      /Cannot ask the judge "claude-haiku-4-5": ANTHROPIC_API_KEY is not set/,
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
