/**
 * The deploy tools over MCP's selection: runs, schedules and reviews are bench tools,
 * review_decide (a person's merge or discard) only in the admin toolset; over a real op
 * context, catalog_deploy refuses an inline command and schedule_list shows what it stored.
 */
import assert from "node:assert/strict";
import { allOps, callOp } from "../../core/ops/registry.ts";
import { selectTools } from "../../mcp/selection.ts";
import { catalogDeploy, scheduleList } from "../../core/ops/deploy_schedules.ts";
import { openHome } from "../../adapters/store/kv/home.ts";
import { NO_RUNNER, testOpContext } from "../helpers/op_context.ts";
import { wikiHome } from "../helpers/wiki_room.ts";
import { catalogRun, reviewList, reviewShow, runList } from "../../core/ops/deploy_runs.ts";
import { createCheckerPool } from "../../sandbox/checker_pool.ts";
import { catalogCalibrate } from "../../core/ops/catalog_run.ts";
import { runRecord } from "../ports/deploy_records_contract.ts";

const names = (profile: string) => selectTools(allOps(), { profile }).ops.map((o) => o.name);

Deno.test("selectTools(): deploy tools are bench tools; review_decide is admin only", () => {
  const bench = names("bench");
  for (
    const t of [
      "catalog_run",
      "catalog_deploy",
      "schedule_list",
      "schedule_cancel",
      "review_list",
      "review_show",
    ]
  ) {
    assert.ok(bench.includes(t), t);
  }
  assert.ok(!bench.includes("review_decide"));
  assert.ok(names("admin").includes("review_decide"));
  assert.ok(names("readonly").includes("review_show"));
  assert.ok(!names("readonly").includes("catalog_run"));
});

Deno.test("catalog_deploy stores a schedule schedule_list shows; an inline command is refused", async () => {
  const dir = await wikiHome();
  const home = await openHome(dir);
  try {
    const ctx = testOpContext(home, NO_RUNNER);
    await assert.rejects(
      () =>
        callOp(catalogDeploy, ctx, {
          room: "wiki",
          name: "wiki-keeper",
          candidate: "x=cmd:rm -rf /",
          every: "1d",
        }),
      /inline commands are not accepted here/,
    );
    const s = await callOp(catalogDeploy, ctx, {
      room: "wiki",
      name: "wiki-keeper",
      candidate: "builtin:reference",
      every: "7d",
      at: "06:30",
    });
    assert.equal(s.every, "7d");
    const listed = await callOp(scheduleList, ctx, {});
    assert.deepEqual(listed.schedules.map((x) => x.id), [s.id]);
    assert.match(listed.schedules[0].nextRun!, /T06:30:00\.000Z$/);
  } finally {
    await home.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("run_list records a run whose process died as interrupted", async () => {
  const dir = await wikiHome();
  const home = await openHome(dir);
  try {
    const ctx = testOpContext(home, NO_RUNNER);
    const gone = new Deno.Command("true").spawn();
    await gone.status;
    const { host } = ctx.services.processes.self();
    await home.state.deploy!.putRun(
      runRecord({ id: "20260101-000000-aaaaaa", owner: { pid: gone.pid, host } }),
    );
    await home.state.deploy!.putRun(
      runRecord({ id: "20260101-000000-bbbbbb", owner: { pid: gone.pid, host: "elsewhere" } }),
    );
    const listed = await callOp(runList, ctx, {});
    assert.deepEqual(listed.runs.map((r) => r.status), ["interrupted", "running"]);
    assert.equal(
      (await home.state.deploy!.getRun("20260101-000000-aaaaaa"))?.status,
      "interrupted",
    );
  } finally {
    await home.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("catalog_run runs, forks and reviews in one call; review_show and review_list show it", async () => {
  const dir = await wikiHome('{:checks [[:diff/only-paths ["wiki/"]] :checker] :on-pass :propose}');
  const home = await openHome(dir);
  const pool = createCheckerPool({ workers: 1 });
  try {
    const ctx = testOpContext(home, pool);
    await assert.rejects(
      () => callOp(catalogRun, ctx, { room: "wiki", name: "wiki-keeper", candidate: "x=cmd:true" }),
      /inline commands are not accepted here/,
    );
    const r = await callOp(catalogRun, ctx, {
      room: "wiki",
      name: "wiki-keeper",
      candidate: "builtin:reference",
    }) as { run: string; decision: string; branch: string; changed: string[] };
    assert.equal(r.decision, "proposed");
    assert.equal(r.branch, `runs/${r.run}`);
    assert.deepEqual(r.changed, ["wiki/backups.md", "wiki/index.md", "wiki/on-call.md"]);
    const shown = await callOp(reviewShow, ctx, { id: r.run });
    assert.equal(shown.final, "proposed");
    assert.ok(shown.checks.every((c) => c.ok));
    const listed = await callOp(reviewList, ctx, { decision: "proposed" });
    assert.deepEqual(listed.reviews.map((v) => v.id), [r.run]);
    await assert.rejects(() => callOp(reviewShow, ctx, { id: "nope" }), /No review "nope"/);
  } finally {
    pool.close();
    await home.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("catalog_calibrate puts calibration.edn's :reviews to the bundle's review", async () => {
  const dir = await wikiHome();
  const home = await openHome(dir);
  const pool = createCheckerPool({ workers: 1 });
  try {
    const r = await callOp(catalogCalibrate, testOpContext(home, pool), {
      room: "wiki",
      name: "wiki-keeper",
    }) as { ok: boolean; reviews: { cases: { name: string; got: string; ok: boolean }[] } };
    assert.equal(r.ok, true);
    assert.deepEqual(
      r.reviews.cases.map((c) => [c.name, c.got, c.ok]),
      [["good-update", "approve", true], ["docs-tampered", "escalate", true], [
        "half-done",
        "escalate",
        true,
      ]],
    );
  } finally {
    pool.close();
    await home.close();
    await Deno.remove(dir, { recursive: true });
  }
});
