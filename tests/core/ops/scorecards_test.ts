import assert from "node:assert/strict";
import { benchmarkedRoom } from "../../helpers/benchmarked_room.ts";
import type { DvergrError } from "../../../core/errors.ts";
import { callOp } from "../../../core/ops/registry.ts";
import { createJobRunner } from "../../../adapters/jobs/job_runner.ts";
import {
  experimentProgress,
  experimentReport,
  scorecardDetail,
  scorecardList,
} from "../../../core/ops/scorecards.ts";
import type { Scorecard } from "../../../core/bench/scorecard.ts";

const benchmarked = () => benchmarkedRoom({ repetitions: 3, rooms: ["empty"] });

Deno.test("scorecard_list gives a room's experiments newest first with leaderboard rows", async () => {
  const { ctx, experiment, close } = await benchmarked();
  try {
    const r = await callOp(scorecardList, ctx, { room: "books" }) as {
      experiments: {
        experiment: string;
        complete: boolean;
        bundle: string;
        leaderboard: {
          rank: number;
          candidate: string;
          meanReward: number;
          passInterval: [number, number];
        }[];
      }[];
      total: number;
    };
    assert.equal(r.total, 1);
    const [e] = r.experiments;
    assert.equal(e.experiment, experiment);
    assert.equal(e.bundle, "recall");
    assert.equal(e.complete, true);
    assert.deepEqual(
      e.leaderboard.map((l) => [l.rank, l.candidate, l.meanReward]),
      [[1, "builtin:reference", 1], [2, "builtin:noop", 0]],
    );
    const [lo, hi] = e.leaderboard[0].passInterval;
    assert.ok(lo > 0 && lo < 1 && hi === 1, "a pass-rate interval, not a point");
    const none = await callOp(scorecardList, ctx, { room: "empty" }) as { experiments: unknown[] };
    assert.deepEqual(none.experiments, []);
  } finally {
    await close();
  }
});

Deno.test("scorecard_detail gives the full scorecard, by id or unique prefix, with another baseline", async () => {
  const { ctx, experiment, close } = await benchmarked();
  try {
    const r = await callOp(scorecardDetail, ctx, {
      room: "books",
      experiment: experiment.slice(0, 8),
    }) as { experiment: string; scorecard: Scorecard };
    assert.equal(r.experiment, experiment);
    assert.equal(r.scorecard.baseline, "builtin:reference");
    assert.equal(r.scorecard.comparisons[0].candidate, "builtin:noop");
    assert.equal(r.scorecard.comparisons[0].rewardDifference, -1);
    const other = await callOp(scorecardDetail, ctx, {
      room: "books",
      experiment,
      baseline: "builtin:noop",
    }) as { scorecard: Scorecard };
    assert.equal(other.scorecard.baseline, "builtin:noop");
    assert.equal(other.scorecard.comparisons[0].rewardDifference, 1);
  } finally {
    await close();
  }
});

Deno.test("scorecard_detail names a room's experiments when the id is unknown, and refuses another room's", async () => {
  const { ctx, experiment, close } = await benchmarked();
  try {
    await assert.rejects(
      () => callOp(scorecardDetail, ctx, { room: "books", experiment: "ffffffff" }),
      (e: DvergrError) => e.code === "NOT_FOUND" && e.hint!.includes(experiment),
    );
    await assert.rejects(
      () => callOp(scorecardDetail, ctx, { room: "empty", experiment }),
      (e: DvergrError) => e.code === "NOT_FOUND" && /catalog_benchmark/.test(e.hint ?? ""),
    );
    await assert.rejects(
      () => callOp(scorecardList, ctx, { room: "nowhere" }),
      (e: DvergrError) => e.code === "NOT_FOUND" && /"nowhere"/.test(e.message),
    );
  } finally {
    await close();
  }
});

Deno.test("experiment_report renders the Markdown report with the bundle's title and candidates", async () => {
  const { ctx, experiment, close } = await benchmarked();
  try {
    const r = await callOp(experimentReport, ctx, { room: "books", experiment }) as {
      markdown: string;
      complete: boolean;
    };
    assert.equal(r.complete, true);
    assert.match(r.markdown, /^# Recall\n/);
    assert.match(r.markdown, /builtin:reference/);
    assert.match(r.markdown, /builtin:noop/);
    assert.ok(r.markdown.includes(experiment));
    // Read in pages of 500 characters, it is the same report.
    let paged = "";
    let offset: number | null = 0;
    while (offset !== null) {
      const page = await callOp(experimentReport, ctx, {
        room: "books",
        experiment,
        offset,
        limit: 500,
      }) as { markdown: string; nextOffset: number | null; note?: string };
      if (page.nextOffset !== null) {
        assert.match(page.note!, /experiment_report with offset \d+ for the rest/);
      }
      paged += page.markdown;
      offset = page.nextOffset;
    }
    assert.equal(paged, r.markdown);
  } finally {
    await close();
  }
});

Deno.test("experiment_progress gives per-candidate verdicts and a room's running jobs", async () => {
  const { ctx, experiment, close } = await benchmarked();
  const jobs = createJobRunner(ctx.home.state);
  try {
    let release = () => {};
    const gate = new Promise<void>((r) => (release = r));
    await jobs.start("benchmark", "books", () => gate);
    const r = await callOp(experimentProgress, { ...ctx, jobs }, { room: "books" }) as {
      experiments: {
        experiment: string;
        cells: number;
        graded: number;
        candidates: { candidate: string; verdicts: number; passes: number; faults: number }[];
      }[];
      runningJobs: { status: string }[];
    };
    assert.equal(r.experiments[0].experiment, experiment);
    assert.equal(r.experiments[0].cells, 6);
    assert.equal(r.experiments[0].graded, 6);
    assert.deepEqual(
      r.experiments[0].candidates.map((c) => [c.candidate, c.verdicts, c.passes, c.faults]),
      [["builtin:noop", 3, 0, 0], ["builtin:reference", 3, 3, 0]],
    );
    assert.deepEqual(r.runningJobs.map((j) => j.status), ["running"]);
    release();
  } finally {
    await jobs.close();
    await close();
  }
});
