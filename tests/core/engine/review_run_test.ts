/**
 * productionRun() then reviewRun() on a real home (git rooms, KV records, the QuickJS checker
 * pool) with the room changed between the run and its review: a change to a path the fork
 * also changed fails :diff/no-conflict (escalated, nothing merged); a change elsewhere is
 * merged as a merge commit of both, which git fsck --strict accepts.
 */
import assert from "node:assert/strict";
import { openHome } from "../../../adapters/store/kv/home.ts";
import { readRoomBundle } from "../../../core/ops/room_bundles.ts";
import { parseBundle } from "../../../core/bundle/parse.ts";
import { productionRun } from "../../../core/engine/production_run.ts";
import { reviewRun } from "../../../core/engine/review_run.ts";
import { createCheckerPool } from "../../../sandbox/checker_pool.ts";
import { testOpContext } from "../../helpers/op_context.ts";
import { wikiHome, wikiRepo } from "../../helpers/wiki_room.ts";

const REVIEW = '{:checks [[:diff/only-paths ["wiki/"]] :checker] :on-pass :merge}';

async function runThenChange(change: Map<string, string>) {
  const dir = await wikiHome(REVIEW);
  const home = await openHome(dir);
  const pool = createCheckerPool({ workers: 1 });
  try {
    const ctx = testOpContext(home, pool);
    const bundle = await readRoomBundle(home.rooms, "wiki", "wiki-keeper");
    const run = await productionRun({
      ...ctx,
      room: "wiki",
      bundle,
      candidate: "builtin:reference",
    });
    assert.equal(run.attempt?.status, "completed");
    assert.deepEqual(run.changed, ["wiki/backups.md", "wiki/index.md", "wiki/on-call.md"]);
    const between = await home.rooms.writeFiles("wiki", change, "a person's edit meanwhile");
    const review = await reviewRun(ctx, run, parseBundle(bundle).definition.review!);
    return { dir, home, run, review: review!, between };
  } finally {
    pool.close();
  }
}

Deno.test("reviewRun() escalates a fork whose path the room changed after the run started", async () => {
  const { dir, home, review, between } = await runThenChange(
    new Map([["wiki/index.md", "# Index\n- [Mine](mine.md)\n"]]),
  );
  try {
    assert.equal(review.decision, "escalated");
    assert.equal(review.state, between);
    assert.deepEqual(review.checks[0], {
      check: ":diff/no-conflict",
      ok: false,
      evidence: "changed in the room since the run started: wiki/index.md",
    });
    assert.equal(await home.rooms.head("wiki"), between, "nothing merged");
  } finally {
    await home.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("reviewRun() merges beside a change elsewhere as a merge commit git fsck accepts", async () => {
  const { dir, home, run, review, between } = await runThenChange(
    new Map([["docs/new.md", "# New\n"]]),
  );
  try {
    assert.equal(review.decision, "merged", review.why);
    const [merge] = await home.rooms.log("wiki");
    assert.equal(merge.id, review.merged);
    assert.deepEqual(merge.parents, [between, run.fork!.commit]);
    const files = await home.rooms.readFiles("wiki");
    assert.equal(files.get("docs/new.md"), "# New\n");
    assert.match(files.get("wiki/index.md")!, /- \[On-call\]\(on-call.md\)/);
    const fsck = new Deno.Command("git", { args: ["-C", wikiRepo(dir), "fsck", "--strict"] })
      .outputSync();
    assert.equal(fsck.success, true, new TextDecoder().decode(fsck.stderr));
  } finally {
    await home.close();
    await Deno.remove(dir, { recursive: true });
  }
});
