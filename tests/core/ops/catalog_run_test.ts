import assert from "node:assert/strict";
import { memoryHome } from "../../../adapters/store/memory/home.ts";
import type { DvergrError } from "../../../core/errors.ts";
import type { OpContext, OpProgress } from "../../../core/ops/op.ts";
import { callOp } from "../../../core/ops/registry.ts";
import {
  catalogBenchmark,
  catalogCalibrate,
  catalogCases,
  catalogCheck,
} from "../../../core/ops/catalog_run.ts";
import { createJobRunner, jobProcess } from "../../../adapters/jobs/job_runner.ts";

/** The job runners of this test process. */
const process = jobProcess();
import { testOpContext } from "../../helpers/op_context.ts";
import { createCheckerPool } from "../../../sandbox/checker_pool.ts";
import { recallBundle } from "../../helpers/bundles.ts";

/** A memory home with a room "books" holding the recall bundle at workflows/recall/. */
async function setup(opts: { jobs?: boolean } = {}) {
  const home = await memoryHome();
  const pool = createCheckerPool({ workers: 1 });
  const jobs = opts.jobs ? createJobRunner(home.state, { process }) : undefined;
  await home.rooms.createRoom("books");
  const files = new Map<string, string | null>();
  for (const [p, t] of recallBundle()) files.set(`workflows/recall/${p}`, t);
  await home.rooms.writeFiles("books", files, "Recall bundle");
  const ctx = testOpContext(home, pool, jobs);
  return {
    ctx,
    async close() {
      await jobs?.close();
      pool.close();
      await home.close();
    },
  };
}

const CSV = [
  "no;vendor;text;account;amount;doc",
  "1;ACME;Paper;4930;12,50;inv1.txt",
  "2;Beta;Fuel;4530;40,00;inv1.txt",
  "3;Gamma;Rent;4210;900,00;inv1.txt",
  "3;Gamma;Rent again;4210;900,00;inv1.txt",
  "4;Delta;Tea;;5,00;inv1.txt",
  "5;Eps;Ink;4930;3,00;../outside.txt",
].join("\n") + "\n";

const SPEC = `{:id "no" :inputs ["vendor" "text"] :attachments ["doc"]
 :expected {"account" {:rule :exact} "amount" {:rule :number :tolerance 0.01}}}`;

async function writeTable(ctx: OpContext) {
  await ctx.home.rooms.writeFiles(
    "books",
    new Map([
      ["data/cases.csv", "\uFEFF" + CSV],
      ["data/inv1.txt", "Invoice 1: paper, 12.50"],
      ["outside.txt", "not beside the table"],
    ]),
    "Cases from 2025",
  );
}

Deno.test("catalog_check gives a room bundle's id, title and cases, and no problems", async () => {
  const { ctx, close } = await setup();
  try {
    const r = await callOp(catalogCheck, ctx, { room: "books", name: "recall" }) as Record<
      string,
      unknown
    >;
    assert.equal(r.ok, true);
    assert.equal(r.title, "Recall");
    assert.match(String(r.bundleId), /^[0-9a-f-]{36}$/);
    assert.equal(r.verdict, undefined);
  } finally {
    await close();
  }
});

Deno.test("catalog_check grades an answer given by world path with the bundle's checker", async () => {
  const { ctx, close } = await setup();
  try {
    const good = await callOp(catalogCheck, ctx, {
      room: "books",
      name: "recall",
      answer: { "/out/list.md": "Wato and Dust" },
    }) as { verdict: { run: { ok: boolean; verdict: { reward: number } } } };
    assert.equal(good.verdict.run.ok, true);
    assert.equal(good.verdict.run.verdict.reward, 1);
    const half = await callOp(catalogCheck, ctx, {
      room: "books",
      name: "recall",
      answer: { "out/list.md": "Wato" },
    }) as { verdict: { run: { verdict: { checks: Record<string, boolean>; reward: number } } } };
    assert.deepEqual(half.verdict.run.verdict.checks, { "wrote-list": true, "found-all": false });
    assert.equal(half.verdict.run.verdict.reward, 0.5);
  } finally {
    await close();
  }
});

Deno.test("catalog_check returns a malformed bundle's problems; an unknown bundle is NOT_FOUND", async () => {
  const { ctx, close } = await setup();
  try {
    await ctx.home.rooms.writeFiles(
      "books",
      new Map([["workflows/broken/workflow.edn", "{:title"]]),
      "Broken",
    );
    const r = await callOp(catalogCheck, ctx, { room: "books", name: "broken" }) as {
      ok: boolean;
      problems: { file: string }[];
    };
    assert.equal(r.ok, false);
    assert.ok(r.problems.some((p) => p.file === "workflow.edn"));
    await assert.rejects(
      () => callOp(catalogCheck, ctx, { room: "books", name: "nope" }),
      (e: DvergrError) => e.code === "NOT_FOUND" && /recall/.test(e.hint ?? ""),
    );
    await assert.rejects(
      () => callOp(catalogCheck, ctx, { room: "books", name: "recall", answer: {}, case: "x" }),
      (e: DvergrError) => e.code === "USAGE" && /no case "x"/.test(e.message),
    );
  } finally {
    await close();
  }
});

Deno.test("catalog_calibrate proves a room bundle calibrates, and says why another does not", async () => {
  const { ctx, close } = await setup();
  try {
    const ok = await callOp(catalogCalibrate, ctx, { room: "books", name: "recall" }) as {
      ok: boolean;
      bundle: string;
    };
    assert.equal(ok.ok, true);
    assert.equal(ok.bundle, "recall");
    // A checker that ignores the answer cannot tell the damaged variants apart.
    await ctx.home.rooms.writeFiles(
      "books",
      new Map([[
        "workflows/recall/checker.js",
        "export function check() { return { checks: { 'wrote-list': true, 'found-all': true }, reward: 1 }; }",
      ]]),
      "Lenient checker",
    );
    const bad = await callOp(catalogCalibrate, ctx, { room: "books", name: "recall" }) as {
      ok: boolean;
      problems: string[];
    };
    assert.equal(bad.ok, false);
    assert.ok(bad.problems.length > 0);
  } finally {
    await close();
  }
});

Deno.test("catalog_calibrate with auto grades the mutations and names a margin under min_margin", async () => {
  const { ctx, close } = await setup();
  try {
    const r = await callOp(catalogCalibrate, ctx, {
      room: "books",
      name: "recall",
      auto: true,
    }) as {
      ok: boolean;
      auto: { margin: number; closest: string; brittle: string[]; mutations: unknown[] };
    };
    assert.equal(r.ok, true);
    // "Wato, Dust" cut in half keeps "Wato,": half the names.
    assert.equal(r.auto.margin, 0.5);
    assert.equal(r.auto.closest, "cut-in-half");
    assert.deepEqual(r.auto.brittle, []);
    const strict = await callOp(catalogCalibrate, ctx, {
      room: "books",
      name: "recall",
      auto: true,
      min_margin: 0.75,
    }) as { ok: boolean; problems: string[] };
    assert.equal(strict.ok, false);
    assert.match(strict.problems[0], /^margin 0\.500 is under the minimum 0\.750: cut-in-half/);
    await assert.rejects(
      () => callOp(catalogCalibrate, ctx, { room: "books", name: "recall", min_margin: 0.5 }),
      (e: DvergrError) => e.code === "USAGE" && /without auto/.test(e.message),
    );
    await assert.rejects(
      () =>
        callOp(catalogCalibrate, ctx, { room: "books", name: "recall", auto: true, min_margin: 2 }),
      (e: DvergrError) =>
        e.code === "USAGE" && /min_margin 2: expected from 0 to 1/.test(e.message),
    );
  } finally {
    await close();
  }
});

Deno.test("catalog_cases writes a certified bundle from a room table as one commit", async () => {
  const { ctx, close } = await setup();
  try {
    await writeTable(ctx);
    const before = (await ctx.home.rooms.log("books")).length;
    const r = await callOp(catalogCases, ctx, {
      room: "books",
      name: "invoice-coding",
      table: "/data/cases.csv",
      spec: SPEC,
    }) as Record<string, unknown> & { excluded: { id: string; reasons: { reason: string }[] }[] };
    assert.equal(r.cases, 6);
    assert.equal(r.certified, 2, JSON.stringify(r));
    const reasons = Object.fromEntries(
      r.excluded.map((e) => [e.id, e.reasons.map((x) => x.reason)]),
    );
    assert.deepEqual(reasons["3"], ["duplicate-id"]);
    assert.deepEqual(reasons["4"], ["unlabelled"]);
    // An attachment outside the table's directory is never read.
    assert.deepEqual(reasons["5"], ["missing-attachment"]);
    assert.equal(r.path, "workflows/invoice-coding/");
    const log = await ctx.home.rooms.log("books");
    assert.equal(log.length, before + 1);
    assert.equal(log[0].id, r.commit);
    const files = await ctx.home.rooms.readFiles("books", "workflows/invoice-coding");
    assert.ok(files.has("workflows/invoice-coding/certification.edn"));
    assert.equal(
      files.get("workflows/invoice-coding/cases/1/fixtures/docs/inv1.txt"),
      "Invoice 1: paper, 12.50",
    );
    // The same table and spec again: nothing changes, no commit.
    const again = await callOp(catalogCases, ctx, {
      room: "books",
      name: "invoice-coding",
      table: "data/cases.csv",
      spec: SPEC,
    }) as Record<string, unknown>;
    assert.equal(again.commit, null);
    assert.equal(again.bundle, r.bundle);
    assert.equal((await ctx.home.rooms.log("books")).length, before + 1);
    const cal = await callOp(catalogCalibrate, ctx, { room: "books", name: "invoice-coding" }) as {
      ok: boolean;
    };
    assert.equal(cal.ok, true);
  } finally {
    await close();
  }
});

Deno.test("catalog_cases refuses a missing table, a bad spec, a bad name, and writes nothing when no case certifies", async () => {
  const { ctx, close } = await setup();
  try {
    await writeTable(ctx);
    const head = (await ctx.home.rooms.log("books"))[0].id;
    const call = (over: Record<string, unknown>) =>
      callOp(catalogCases, ctx, {
        room: "books",
        name: "ic",
        table: "/data/cases.csv",
        spec: SPEC,
        ...over,
      });
    await assert.rejects(
      () => call({ table: "/data/missing.csv" }),
      (e: DvergrError) => e.code === "NOT_FOUND" && /missing\.csv/.test(e.message),
    );
    await assert.rejects(
      () => call({ spec: "{:id 1" }),
      (e: DvergrError) => e.code === "EDN_SYNTAX" || e.code === "SPEC_INVALID",
    );
    await assert.rejects(
      () => call({ spec: '{:id "nr" :inputs ["vendor"] :expected {"account" :exact}}' }),
      (e: DvergrError) => e.code === "SPEC_INVALID" && /"nr"/.test(e.message),
    );
    await assert.rejects(
      () => call({ name: "Invoice Coding" }),
      (e: DvergrError) => e.code === "USAGE" && /invoice-coding/.test(e.hint ?? ""),
    );
    await assert.rejects(
      () => call({ table: "../x.csv" }),
      (e: DvergrError) => e.code === "PATH_INVALID",
    );
    await ctx.home.rooms.writeFiles(
      "books",
      new Map([["data/empty.csv", "no;vendor;text;account;amount;doc\n1;A;B;;;\n"]]),
      "Unlabelled",
    );
    const head2 = (await ctx.home.rooms.log("books"))[0].id;
    assert.notEqual(head2, head);
    await assert.rejects(
      () => call({ table: "/data/empty.csv" }),
      (e: DvergrError) =>
        e.code === "NOT_CERTIFIED" && e.result && (e.details?.cases as number) === 1,
    );
    assert.equal((await ctx.home.rooms.log("books"))[0].id, head2, "nothing was written");
  } finally {
    await close();
  }
});

Deno.test("catalog_benchmark returns a job at once; the job runs the experiment in the given room", async () => {
  const { ctx, close } = await setup({ jobs: true });
  try {
    const sent: OpProgress[] = [];
    const r = await callOp(catalogBenchmark, { ...ctx, progress: (p) => sent.push(p) }, {
      room: "books",
      name: "recall",
      candidates: ["builtin:reference", "builtin:noop"],
      repetitions: 2,
    }) as Record<string, unknown>;
    assert.equal(r.status, "running");
    assert.equal(typeof r.job, "string");
    assert.equal(r.cells, 4);
    assert.equal(sent[0]?.total, 4, "a progressToken caller hears the job start");
    // Another runner of this process reads the job through the store.
    const jobs = createJobRunner(ctx.home.state, { process });
    const done = await jobs.wait(r.job as string, 20_000);
    assert.equal(done.status, "succeeded", JSON.stringify(done));
    const result = done.result as Record<string, unknown> & {
      leaderboard: { candidate: string; meanReward: number }[];
    };
    assert.equal(result.experiment, r.experiment);
    assert.equal(result.complete, true);
    assert.deepEqual(done.progress, { done: 4, total: 4, faults: 0, phase: "done" });
    assert.deepEqual(
      result.leaderboard.map((l) => [l.candidate, l.meanReward]),
      [["builtin:reference", 1], ["builtin:noop", 0]],
    );
    const metas = await ctx.home.state.listExperiments("books");
    assert.deepEqual(metas.map((m) => m.id), [r.experiment]);
    assert.ok(await ctx.home.state.getScorecard(r.experiment as string));
  } finally {
    await close();
  }
});

Deno.test("catalog_benchmark without a job runner runs to the end in the call", async () => {
  const { ctx, close } = await setup();
  try {
    const r = await callOp(catalogBenchmark, ctx, {
      room: "books",
      name: "recall",
      candidates: ["builtin:reference"],
    }) as Record<string, unknown>;
    assert.equal(r.job, undefined);
    assert.equal(r.complete, true);
    assert.equal(r.graded, 1);
  } finally {
    await close();
  }
});

Deno.test("catalog_calibrate and catalog_benchmark of a room bundle whose checker does not load: BUNDLE_INVALID with its line, nothing recorded", async () => {
  const { ctx, close } = await setup();
  try {
    await ctx.home.rooms.writeFiles(
      "books",
      new Map([["workflows/recall/checker.js", "export function check( {\n"]]),
      "Broken checker",
    );
    const broken = (e: DvergrError) =>
      e.code === "BUNDLE_INVALID" && /checker\.js line 2, column \d+: syntax error/.test(e.message);
    await assert.rejects(
      () => callOp(catalogCalibrate, ctx, { room: "books", name: "recall" }),
      broken,
    );
    await assert.rejects(
      () =>
        callOp(catalogBenchmark, ctx, {
          room: "books",
          name: "recall",
          candidates: ["builtin:reference"],
        }),
      broken,
    );
    for (const exp of await ctx.home.state.listExperiments()) {
      assert.deepEqual(await ctx.home.state.cellRecords(exp.id), []);
    }
  } finally {
    await close();
  }
});

Deno.test("catalog_benchmark refuses inline commands, no candidates, an unknown baseline and a model without its key", async () => {
  const { ctx, close } = await setup({ jobs: true });
  try {
    const call = (over: Record<string, unknown>) =>
      callOp(catalogBenchmark, ctx, { room: "books", name: "recall", ...over });
    await assert.rejects(
      () => call({ candidates: ["me=cmd:rm -rf /tmp/x"] }),
      (e: DvergrError) => e.code === "CANDIDATE_INVALID" && /candidates\.edn/.test(e.hint ?? ""),
    );
    await assert.rejects(() => call({}), (e: DvergrError) => e.code === "USAGE");
    await assert.rejects(
      () => call({ candidates: ["builtin:noop"], baseline: "x" }),
      (e: DvergrError) => e.code === "USAGE" && /baseline "x"/.test(e.message),
    );
    await assert.rejects(
      () => call({ models: ["claude-haiku-4-5"] }),
      (e: DvergrError) => e.code === "API_KEY_MISSING",
    );
    assert.deepEqual(await ctx.home.state.listJobs(), [], "no job was started");
  } finally {
    await close();
  }
});

Deno.test("catalog_benchmark takes bare agent:CLI:MODEL specs as agent CLIs and says NAME=cmd needs its colon", async () => {
  const { ctx, close } = await setup();
  const noClis = await Deno.makeTempDir();
  try {
    const env = (n: string) =>
      ({ PATH: "/usr/bin:/bin", DVERGR_AGENT_CLIS: noClis } as Record<string, string>)[n];
    const call = (candidates: string[]) =>
      callOp(catalogBenchmark, { ...ctx, env }, { room: "books", name: "recall", candidates });
    for (const spec of ["agent:claude-code:haiku", "agent:codex:gpt-4.1-mini"]) {
      await assert.rejects(
        () => call([spec]),
        (e: DvergrError) =>
          e.code === "AGENT_CLI_MISSING" && e.message.includes(`candidate "${spec}"`),
      );
    }
    await assert.rejects(
      () => call(["mine=cmd"]),
      (e: DvergrError) =>
        e.code === "CANDIDATE_INVALID" && /"cmd" needs a colon/.test(e.message) &&
        /NAME=cmd:COMMAND/.test(e.hint ?? ""),
    );
  } finally {
    await Deno.remove(noClis, { recursive: true });
    await close();
  }
});

Deno.test("catalog_benchmark with stop_when_decided reports where each comparison's sequence stands", async () => {
  const { ctx, close } = await setup();
  try {
    const r = await callOp(catalogBenchmark, ctx, {
      room: "books",
      name: "recall",
      candidates: ["builtin:reference", "builtin:noop"],
      repetitions: 10,
      baseline: "builtin:noop",
      stop_when_decided: true,
      alpha: 0.1,
    }) as Record<string, unknown>;
    assert.equal(r.complete, true);
    // Ten pairs of a reward difference of 1 are not yet enough at alpha 0.1: nothing is skipped.
    assert.deepEqual(r.stopped, [
      "builtin:reference open against builtin:noop after 10 of 10 pairs, sequence -0.23 to +1.00",
    ]);
    assert.equal(r.notNeeded, 0);
    const rows = r.leaderboard as { candidate: string; notNeeded?: number }[];
    assert.deepEqual(rows.map((x) => x.notNeeded), [0, 0]);
    await assert.rejects(
      () =>
        callOp(catalogBenchmark, ctx, {
          room: "books",
          name: "recall",
          candidates: ["builtin:noop"],
          delta: 0.1,
        }),
      (e: DvergrError) => e.code === "USAGE" && /without stop_when_decided/.test(e.message),
    );
  } finally {
    await close();
  }
});
