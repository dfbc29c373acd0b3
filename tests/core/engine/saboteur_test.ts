/**
 * Scoring integrity: a candidate that fails loudly (leaves its world in a state the host
 * cannot read back) must rank by what it solved, never above an honest candidate that
 * solved more.
 */
import assert from "node:assert/strict";
import { createCheckerPool } from "../../../sandbox/checker_pool.ts";
import { memoryHome } from "../../../adapters/store/memory/home.ts";
import { planExperiment } from "../../../core/bench/experiment.ts";
import { scoreExperiment } from "../../../core/engine/score_experiment.ts";
import { planRecords } from "../../helpers/plan_records.ts";
import { commandCandidate } from "../../../adapters/candidates/command/command.ts";
import { getJson } from "../../../core/ports/blob_store.ts";
import { wordBundle } from "../../helpers/dataset_bundle.ts";
import { runInHome } from "../../helpers/engine_run.ts";

const env = (k: string) => Deno.env.get(k);

/** Answers case c<i> right when i ≥ `from`; otherwise runs `otherwise`. */
function agent(name: string, from: number, otherwise: string) {
  const command =
    `n=\${DVERGR_CASE#c}; if [ "$n" -ge ${from} ]; then cat docs/q.txt > out/answer.txt; ` +
    `else ${otherwise}; fi`;
  return commandCandidate({ name, command }, { isolation: "none", env, killGraceMs: 100 });
}

// 500 directories of 10 characters below /out: a path of 5,500 bytes, beyond PATH_MAX.
const NEST = "cd out && p=$(printf 'dddddddddd/%.0s' $(seq 100)) && " +
  "for i in 1 2 3 4 5; do mkdir -p $p && cd $p; done";

Deno.test("runExperiment() ranks a saboteur that nests 500 directories below an honest candidate that solved more", async () => {
  const bundle = wordBundle(10);
  // Saboteur first in declared order, so a tie would favour it.
  const saboteur = agent("saboteur", 4, NEST);
  const honest = agent("honest", 3, "true");
  const home = await memoryHome();
  const pool = createCheckerPool({ workers: 1 });
  try {
    const plan = planExperiment(bundle, [saboteur, honest], {});
    const result = await runInHome(home, {
      bundle,
      plan,
      candidates: [saboteur, honest],
      runner: pool,
      parallel: 2,
    });
    // Every cell is graded: nothing the saboteur did is a fault of the host.
    assert.equal(result.complete, true);
    assert.equal(result.faults, 0);
    const { scorecard: card } = await scoreExperiment(home.state, plan, {
      trust: "ad-hoc",
      bundleCases: bundle.cases.length,
    });
    assert.deepEqual(card.leaderboard, ["honest", "saboteur"]);
    const s = card.candidates.find((c) => c.candidate === "saboteur")!;
    const h = card.candidates.find((c) => c.candidate === "honest")!;
    assert.equal(s.passes, 7);
    assert.equal(s.attempts, 10);
    assert.equal(s.faults, 0);
    assert.equal(s.rankedPassRate, 0.7);
    assert.equal(h.rankedPassRate, 0.8);
    // The sabotaged cells say why: the walk stopped at the depth limit.
    const sabotaged = (await planRecords(home.state, plan)).find((r) =>
      r.candidate === "saboteur" && r.caseId === "c1"
    )!;
    assert.equal(sabotaged.passed, false);
    const ev = await getJson<{ captured: { skipped: { reason: string }[] } }>(
      home.blobs,
      sabotaged.evidenceRef!,
    );
    assert.ok(ev!.captured.skipped.some((x) => x.reason === "too-deep"));
  } finally {
    pool.close();
    await home.close();
  }
});

Deno.test("runExperiment() ranks saboteurs of several kinds by what they solved, never above an honest candidate", async () => {
  const bundle = wordBundle(6);
  // Each saboteur solves c3…c6 and, when it cannot (c1, c2), leaves something hostile.
  const kinds: Record<string, string> = {
    nest: NEST,
    fifo: "mkfifo out/answer.txt",
    socket:
      `perl -MIO::Socket::UNIX -e 'IO::Socket::UNIX->new(Local => "out/answer.txt", Listen => 1) or exit 3'`,
    link: "ln -s /etc/passwd out/answer.txt",
    sparse: "truncate -s 2G out/answer.txt",
    binary: "printf 'w1\\0\\377' > out/answer.txt",
    "exit-127": "exit 127",
    "kill-self": "kill -9 $$",
    "many-files": "mkdir out/m && cd out/m && seq 3000 | xargs touch",
    "many-entries": "mkdir out/m && cd out/m && seq 60000 | xargs touch",
  };
  const saboteurs = Object.entries(kinds).map(([name, cmd]) => agent(name, 3, cmd));
  const honest = agent("honest", 2, "true"); // solves c2…c6: one more than any saboteur
  const candidates = [...saboteurs, honest];
  const home = await memoryHome();
  const pool = createCheckerPool({ workers: 1 });
  try {
    // Writing 60,000 files takes seconds, more than 20 at load 20: the time limit must not
    // decide this outcome.
    const plan = planExperiment(bundle, candidates, { timeoutMs: 300_000 });
    await runInHome(home, {
      bundle,
      plan,
      candidates,
      runner: pool,
      parallel: 2,
    });
    const { scorecard: card } = await scoreExperiment(home.state, plan, {
      trust: "ad-hoc",
      bundleCases: bundle.cases.length,
    });
    assert.equal(card.leaderboard[0], "honest", JSON.stringify(card.leaderboard));
    for (const s of card.candidates.filter((c) => c.candidate !== "honest")) {
      assert.ok(s.rankedPassRate <= 4 / 6, `${s.candidate}: ${s.rankedPassRate}`);
      assert.equal(s.passes, 4, s.candidate);
    }
    // None of it is a fault (which would run again): exiting 127 is a failure like any other.
    const faults = card.candidates.filter((c) => c.faults > 0).map((c) => c.candidate);
    assert.deepEqual(faults, []);
    // Over the capture's entries the attempt fails with that cause, not on what happened to fit.
    const over = (await planRecords(home.state, plan)).find((r) =>
      r.candidate === "many-entries" && r.caseId === "c1"
    )!;
    assert.match(
      over.failure?.message ?? "",
      /wrote more than 50,000 entries under \/out/,
      JSON.stringify(over),
    );
  } finally {
    pool.close();
    await home.close();
  }
});
