import assert from "node:assert/strict";
import { createCheckerPool } from "../../../sandbox/checker_pool.ts";
import { memoryHome } from "../../../adapters/store/memory/home.ts";
import { planExperiment, type PlanOptions } from "../../../core/bench/experiment.ts";
import { type ProgressEvent, runExperiment } from "../../../core/engine/run_experiment.ts";
import type { Timer } from "../../../core/ports/timer.ts";
import { fakeTimer } from "../../helpers/fake_timer.ts";
import { withRecords } from "../../helpers/plan_records.ts";
import { scoreExperiment } from "../../../core/engine/score_experiment.ts";
import { type Candidate, NO_USAGE } from "../../../core/bench/candidate.ts";
import { builtinCandidate } from "../../../adapters/candidates/builtin/builtin.ts";
import { commandCandidate } from "../../../adapters/candidates/command/command.ts";
import { memoryBlobStore } from "../../../adapters/store/memory/blob_store.ts";
import { getJson } from "../../../core/ports/blob_store.ts";
import { openKvStateStore } from "../../../adapters/store/kv/state_store.ts";
import type { Bundle } from "../../../core/bundle/types.ts";
import { wordBundle } from "../../helpers/dataset_bundle.ts";
import { composeServices } from "../../../adapters/compose.ts";
import { runInHome } from "../../helpers/engine_run.ts";

const env = (k: string) => Deno.env.get(k);
const pool = createCheckerPool({ workers: 2 });
// The pool's workers live for the whole file; close them after the last test.
globalThis.addEventListener("unload", () => pool.close());

function cmd(name: string, command: string): Candidate {
  return commandCandidate({ name, command }, { isolation: "none", env, killGraceMs: 100 });
}

/**
 * `inner`, except that its first `times` attempts end as faults: what only the host can cause
 * (a sandbox that did not start), since nothing a command does is a fault any more.
 */
function faultingFirst(inner: Candidate, times: number): Candidate {
  let calls = 0;
  return {
    ...inner,
    run(ctx) {
      if (calls++ >= times) return inner.run(ctx);
      return Promise.resolve({
        status: "fault",
        message: `Cannot start "${inner.name}": the sandbox did not start`,
        usage: { ...NO_USAGE },
        billedMicros: 0,
        listMicros: null,
        isolated: false,
        evidence: {},
      });
    },
  };
}

async function run(
  bundle: Bundle,
  candidates: Candidate[],
  opts: PlanOptions & {
    parallel?: number;
    signal?: AbortSignal;
    onEvent?: (e: ProgressEvent) => void;
  } = {},
  home?: Awaited<ReturnType<typeof memoryHome>>,
) {
  const h = home ?? await memoryHome();
  const plan = planExperiment(bundle, candidates, opts);
  const result = await runInHome(h, {
    bundle,
    plan,
    candidates,
    runner: pool,
    parallel: opts.parallel,
    signal: opts.signal,
    onEvent: opts.onEvent,
  });
  return { home: h, plan, result: await withRecords(h.state, plan, result) };
}

Deno.test("runExperiment() grades every cell, then resumes without running any again", async () => {
  const bundle = wordBundle(3);
  const cands = [builtinCandidate("reference", bundle), builtinCandidate("noop", bundle)];
  const first = await run(bundle, cands, { repetitions: 2 });
  assert.equal(first.result.total, 12);
  assert.equal(first.result.attempts, 12);
  assert.equal(first.result.complete, true);
  // builtin:reference writes the calibration reference (case c1's answer) everywhere.
  const passed = first.result.records.filter((r) => r.passed).map((r) => [r.candidate, r.caseId]);
  assert.deepEqual(passed, [["builtin:reference", "c1"], ["builtin:reference", "c1"]]);
  const again = await run(bundle, cands, { repetitions: 2 }, first.home);
  assert.equal(again.result.kept, 12);
  assert.equal(again.result.attempts, 0);
  assert.deepEqual(again.result.records, first.result.records);
  const { scorecard: card } = await scoreExperiment(first.home.state, again.plan, {
    trust: "ad-hoc",
    bundleCases: bundle.cases.length,
  });
  assert.equal(card.complete, true);
  assert.deepEqual(await first.home.state.getScorecard(again.plan.id), card);
  await first.home.close();
});

Deno.test("runExperiment() keeps evidence: captured files, candidate output and the checker's verdict", async () => {
  const bundle = wordBundle(1);
  const { home, result } = await run(bundle, [
    cmd("cat", "cat docs/q.txt > out/answer.txt; echo done"),
  ]);
  const [r] = result.records;
  assert.equal(r.passed, true);
  assert.deepEqual(r.verdict, {
    checks: { answered: true, right: true, "completed?": true },
    reward: 1,
  });
  const ev = await getJson<{
    captured: { files: Record<string, string> };
    candidate: { stdoutTail: string };
    checker: { verdict: { reward: number } };
  }>(home.blobs, r.evidenceRef!);
  assert.deepEqual(ev!.captured.files, { "/out/answer.txt": "w1" });
  assert.equal(ev!.candidate.stdoutTail, "done\n");
  assert.equal(ev!.checker.verdict.reward, 1);
  // The world is gone.
  const left = [...Deno.readDirSync(home.worldsDir)];
  assert.equal(left.length, 0);
  await home.close();
});

Deno.test("runExperiment() tries a faulted cell once more in the same run", async () => {
  const bundle = wordBundle(1);
  const flaky = faultingFirst(cmd("flaky", "cat docs/q.txt > out/answer.txt"), 1);
  const { home, plan, result } = await run(bundle, [flaky]);
  assert.equal(result.attempts, 2);
  assert.equal(result.complete, true);
  assert.equal(result.records[0].tryNo, 2);
  const history = await home.state.attemptHistory(plan.id);
  assert.deepEqual(history.map((h) => [h.tryNo, h.status, h.fault?.source ?? null]), [
    [1, "fault", "candidate"],
    [2, "completed", null],
  ]);
  await home.close();
});

Deno.test("runExperiment() leaves cells that keep faulting unfinished, and runs them again on resume", async () => {
  const bundle = wordBundle(2);
  const broken = faultingFirst(cmd("broken", "true"), Infinity);
  const first = await run(bundle, [broken]);
  assert.equal(first.result.complete, false);
  assert.equal(first.result.faults, 2);
  assert.equal(first.result.attempts, 4);
  const again = await run(bundle, [broken], {}, first.home);
  assert.equal(again.result.kept, 0);
  assert.deepEqual(again.result.records.map((r) => r.tryNo), [4, 4]);
  const { scorecard: card } = await scoreExperiment(first.home.state, again.plan, {
    trust: "ad-hoc",
    bundleCases: bundle.cases.length,
  });
  assert.equal(card.complete, false);
  assert.equal(await first.home.state.getScorecard(again.plan.id), null);
  await first.home.close();
});

Deno.test("runExperiment() records a checker fault as a fault of the checker", async () => {
  const bundle = wordBundle(1);
  const { home, result } = await run(bundle, [cmd("boom", "echo boom > out/answer.txt")], {
    params: { explode: true },
  });
  const [r] = result.records;
  assert.equal(r.verdict, null);
  assert.equal(r.fault?.source, "checker");
  assert.equal(r.fault?.kind, "threw");
  assert.match(r.fault?.message ?? "", /checker exploded/);
  assert.equal(r.tryNo, 2);
  await home.close();
});

Deno.test("runExperiment() grades a timed-out or crashed attempt with reward 0 and completed? false", async () => {
  const bundle = wordBundle(1);
  const { home, result } = await run(bundle, [
    cmd("slow", "cat docs/q.txt > out/answer.txt; sleep 30"),
    cmd("crash", "cat docs/q.txt > out/answer.txt; exit 2"),
  ], { timeoutMs: 1000 });
  const [slow, crash] = result.records;
  assert.equal(slow.status, "timeout");
  assert.deepEqual(slow.verdict, {
    checks: { answered: true, right: true, "completed?": false },
    reward: 0,
  });
  assert.equal(slow.passed, false);
  assert.ok(slow.elapsedMs < 5000);
  assert.equal(crash.status, "crashed");
  assert.equal(crash.verdict?.reward, 0);
  assert.equal(crash.verdict?.checks["completed?"], false);
  assert.equal(result.complete, true);
  await home.close();
});

Deno.test("runExperiment() ends an attempt whose candidate ignores its time limit once the grace is over too", async () => {
  const bundle = wordBundle(1);
  let late: ReturnType<typeof setTimeout> | undefined;
  let aborted = false;
  // Ignores the abort at its limit, and would answer on its own only long after limit and grace.
  const deaf: Candidate = {
    name: "deaf",
    identity: { kind: "test", test: "deaf" },
    run(ctx) {
      ctx.signal.addEventListener("abort", () => aborted = true);
      return new Promise((resolve) => {
        late = setTimeout(() =>
          resolve({
            status: "completed",
            usage: { ...NO_USAGE },
            billedMicros: 0,
            listMicros: null,
            isolated: false,
            evidence: {},
          }), 20_000);
      });
    },
  };
  const home = await memoryHome();
  const plan = planExperiment(bundle, [deaf], { timeoutMs: 1000 });
  try {
    const result = await runInHome(home, {
      bundle,
      plan,
      candidates: [deaf],
      runner: pool,
      stopGraceMs: 50,
    });
    const [r] = (await withRecords(home.state, plan, result)).records;
    assert.equal(aborted, true);
    assert.equal(r.status, "timeout");
    assert.equal(r.ending?.message, "Did not stop within 1000 ms plus 50 ms of grace");
    assert.ok(r.elapsedMs >= 1000);
  } finally {
    clearTimeout(late);
    await home.close();
  }
});

/** Attempts of a copying() candidate: begun, running now, most at once. */
interface Seen {
  started: number;
  now: number;
  peak: number;
}

/** A candidate that copies the case's word to the answer after `wait()`, counting attempts. */
function copying(name: string, wait: () => Promise<unknown>, seen: Seen): Candidate {
  return {
    name,
    identity: { kind: "test", name },
    async run(ctx) {
      seen.started++;
      seen.peak = Math.max(seen.peak, ++seen.now);
      await wait();
      await ctx.world.write("/out/answer.txt", await ctx.world.read("/docs/q.txt"));
      seen.now--;
      return {
        status: "completed",
        usage: { ...NO_USAGE },
        billedMicros: 0,
        listMicros: null,
        isolated: true,
        evidence: {},
      };
    },
  };
}

Deno.test("runExperiment() runs at most --parallel attempts at once", async () => {
  const bundle = wordBundle(4);
  const seen = { started: 0, now: 0, peak: 0 };
  const counting = copying("counting", () => new Promise((r) => setTimeout(r, 30)), seen);
  const { home, result } = await run(bundle, [counting], { repetitions: 3, parallel: 3 });
  assert.equal(result.complete, true);
  assert.equal(seen.peak, 3);
  assert.equal(result.records.filter((r) => r.passed).length, 12);
  await home.close();
});

Deno.test("runExperiment() records nothing for the attempts a cancelled run interrupts", async () => {
  const bundle = wordBundle(4);
  const ctl = new AbortController();
  const events: ProgressEvent[] = [];
  const slow = cmd("slow", "sleep 0.3; cat docs/q.txt > out/answer.txt");
  const { home, plan, result } = await run(bundle, [slow], {
    parallel: 2,
    signal: ctl.signal,
    onEvent: (e) => {
      events.push(e);
      if (e.type === "attempt" && e.done === 2) ctl.abort();
    },
  });
  assert.equal(result.cancelled, true);
  assert.equal(result.complete, false);
  const history = await home.state.attemptHistory(plan.id);
  assert.equal(history.length, 2);
  assert.ok(history.every((h) => h.verdict !== null));
  assert.deepEqual(events.at(-1), { type: "end", done: 2, faults: 0, total: 4, cancelled: true });
  const resumed = await run(bundle, [slow], { parallel: 2 }, home);
  assert.equal(resumed.result.kept, 2);
  assert.equal(resumed.result.attempts, 2);
  assert.equal(resumed.result.complete, true);
  await home.close();
});

Deno.test("runExperiment() counts at its end a cell another process recorded while it ran", async () => {
  const bundle = wordBundle(4);
  const ctl = new AbortController();
  const events: ProgressEvent[] = [];
  const slow = cmd("slow", "sleep 0.3; cat docs/q.txt > out/answer.txt");
  const home = await memoryHome();
  const plan = planExperiment(bundle, [slow], {});
  const last = plan.cells.at(3);
  const { result } = await run(bundle, [slow], {
    parallel: 1,
    signal: ctl.signal,
    onEvent: (e) => {
      events.push(e);
      if (e.type !== "attempt") return;
      // Another process records the last cell (this run has not reached it), then this run stops.
      void home.state.putAttempt({
        ...e.record,
        caseId: last.caseId,
        repetition: last.repetition,
        inputHash: last.inputHash,
      }).then(() => ctl.abort());
    },
  }, home);
  assert.equal(result.cancelled, true);
  assert.equal(result.graded, 2);
  assert.deepEqual(events.at(-1), { type: "end", done: 2, faults: 0, total: 4, cancelled: true });
  await home.close();
});

Deno.test("runExperiment() starts a new experiment beside the old one when the bundle changes", async () => {
  const home = await memoryHome();
  const a = wordBundle(2);
  const b = wordBundle(2, { "cases/c2/gold.edn": '{:word "other"}' });
  const ra = await run(a, [builtinCandidate("noop", a)], {}, home);
  const rb = await run(b, [builtinCandidate("noop", b)], {}, home);
  assert.notEqual(ra.plan.id, rb.plan.id);
  assert.equal(rb.result.kept, 0);
  assert.deepEqual(
    (await home.state.listExperiments()).map((e) => e.id).sort(),
    [ra.plan.id, rb.plan.id].sort(),
  );
  assert.equal((await home.state.cellRecords(ra.plan.id)).length, 2);
  await home.close();
});

/** Resolves once `ok()` holds, looking every few ms (at most 10 s). */
async function until(ok: () => boolean): Promise<void> {
  for (let i = 0; i < 1000 && !ok(); i++) await new Promise((r) => setTimeout(r, 10));
  assert.ok(ok(), "the condition did not come true within 10 s");
}

async function runOn(
  home: Awaited<ReturnType<typeof memoryHome>>,
  bundle: Bundle,
  candidates: Candidate[],
  plan: ReturnType<typeof planExperiment>,
  extra: {
    leaseMs?: number;
    onEvent?: (e: ProgressEvent) => void;
    parallel?: number;
    timer?: Timer;
  } = {},
) {
  const result = await runInHome(home, {
    bundle,
    plan,
    candidates,
    runner: pool,
    maxPollMs: 100,
    ...extra,
  });
  return await withRecords(home.state, plan, result);
}

Deno.test("runExperiment() twice at once on one home runs every cell once between them", async () => {
  const home = await memoryHome();
  const bundle = wordBundle(4);
  const slow = [cmd("slow", "sleep 0.2; cat docs/q.txt > out/answer.txt")];
  const plan = planExperiment(bundle, slow, { repetitions: 2 });
  const events: ProgressEvent[][] = [[], []];
  const [a, b] = await Promise.all(
    [0, 1].map((i) =>
      runOn(home, bundle, slow, plan, { parallel: 2, onEvent: (e) => events[i].push(e) })
    ),
  );
  assert.equal(a.complete, true);
  assert.equal(b.complete, true);
  assert.deepEqual(a.records, b.records);
  // Eight cells, eight attempts in all, shared between the two runs.
  assert.equal(a.attempts + b.attempts, 8);
  assert.ok(a.attempts > 0 && b.attempts > 0, `${a.attempts} + ${b.attempts}`);
  const history = await home.state.attemptHistory(plan.id);
  assert.equal(history.length, 8);
  assert.ok(history.every((r) => r.tryNo === 1 && r.passed));
  // Each run saw every cell finish, and no lease is left behind.
  for (const ev of events) {
    assert.deepEqual(ev.at(-1), {
      type: "end",
      done: 8,
      faults: 0,
      total: 8,
      cancelled: false,
    });
  }
  for (const cell of plan.cells) assert.equal(await home.state.leaseOf(plan.id, cell.key), null);
  await home.close();
});

Deno.test("runExperiment() waits for a cell another live process runs and takes its record", async () => {
  const home = await memoryHome();
  const bundle = wordBundle(3);
  const cands = [builtinCandidate("reference", bundle)];
  const plan = planExperiment(bundle, cands, {});
  const other = { pid: 1, host: "elsewhere", owner: "other-run" };
  const held = plan.cells.at(1);
  // Time moves only when this test says: the other process's lease never runs out by itself.
  const timer = fakeTimer();
  const lease = (at: number) => home.state.takeLease(plan.id, held.key, other, 1000, at);
  assert.equal((await lease(timer.now())).ok, true);
  const events: ProgressEvent[] = [];
  let ended = false;
  const running = runOn(home, bundle, cands, plan, {
    leaseMs: 1000,
    timer,
    onEvent: (e) => events.push(e),
  }).finally(() => ended = true);
  await until(() => events.some((e) => e.type === "waiting"));
  // The other process renews its lease over 1.2 s, then records the cell and releases it.
  for (let i = 0; i < 4; i++) {
    await timer.advance(300);
    assert.equal(
      await home.state.renewLease(plan.id, held.key, other.owner, 1000, timer.now()),
      true,
    );
  }
  const theirs = {
    experimentId: plan.id,
    candidate: held.candidate,
    caseId: held.caseId,
    repetition: held.repetition,
    inputHash: held.inputHash,
    tryNo: 1,
    startedAt: "2026-01-01T00:00:00.000Z",
    elapsedMs: 5,
    status: "completed" as const,
    verdict: { checks: { answered: true, right: false, "completed?": true }, reward: 0 },
    fault: null,
    passed: false,
    usage: { ...NO_USAGE },
    billedMicros: 0,
    listMicros: null,
    isolated: true,
    trust: "ad-hoc" as const,
    evidenceRef: null,
  };
  assert.equal(await home.state.putAttempt(theirs), true);
  await home.state.releaseLease(plan.id, held.key, other.owner);
  while (!ended) await timer.advance(500);
  const result = await running;
  assert.equal(result.complete, true);
  assert.equal(result.attempts, 2);
  assert.deepEqual(result.records[1], theirs);
  const waiting = events.filter((e) => e.type === "waiting");
  assert.deepEqual(waiting, [
    { type: "waiting", cells: 1, leaseMs: 1000, done: 2, faults: 0, total: 3 },
  ]);
  assert.equal((await home.state.attemptHistory(plan.id)).length, 3);
  await home.close();
});

Deno.test("runExperiment() takes over the cells of a holder that stopped once its lease runs out", async () => {
  const home = await memoryHome();
  const bundle = wordBundle(2);
  const cands = [builtinCandidate("reference", bundle)];
  const plan = planExperiment(bundle, cands, { repetitions: 2 });
  // A holder killed with -9: its leases stay until they expire, nobody renews them.
  const dead = { pid: 999_999, host: "gone", owner: "dead-run" };
  // A timer that jumps to the next wake-up whenever the run waits: 30 s leases in ms.
  const timer = fakeTimer({ auto: true });
  const t0 = timer.now();
  for (const cell of [...plan.cells].slice(0, 3)) {
    await home.state.takeLease(plan.id, cell.key, dead, 30_000, t0);
  }
  const events: ProgressEvent[] = [];
  const result = await runOn(home, bundle, cands, plan, {
    leaseMs: 30_000,
    timer,
    onEvent: (e) => events.push(e),
  });
  timer.stop();
  assert.equal(result.complete, true);
  assert.equal(result.attempts, 4);
  assert.ok(timer.now() - t0 >= 30_000, "it waited until the leases ran out");
  // It waited for the three held cells (on a loaded machine the leases may run out one by
  // one, so the count can go down between waits, never up).
  const waits = events.flatMap((e) => e.type === "waiting" ? [e.cells] : []);
  assert.equal(waits[0], 3, JSON.stringify(waits));
  assert.ok(waits.every((n, i) => i === 0 || n <= waits[i - 1]), JSON.stringify(waits));
  const history = await home.state.attemptHistory(plan.id);
  assert.deepEqual(history.map((r) => r.tryNo), [1, 1, 1, 1]);
  await home.close();
});

Deno.test("runExperiment() takes a dead local process's cells at once, not after its lease", async () => {
  const home = await memoryHome();
  const bundle = wordBundle(2);
  const cands = [builtinCandidate("reference", bundle)];
  const plan = planExperiment(bundle, cands, { repetitions: 2 });
  // A process of this host that has ended (kill -9): its pid no longer runs.
  const child = new Deno.Command("true").spawn();
  await child.status;
  const dead = { pid: child.pid, host: Deno.hostname(), owner: "dead-local-run" };
  for (const cell of [...plan.cells].slice(0, 3)) {
    await home.state.takeLease(plan.id, cell.key, dead, 60_000);
  }
  const events: ProgressEvent[] = [];
  const t0 = performance.now();
  const result = await runOn(home, bundle, cands, plan, {
    leaseMs: 60_000,
    onEvent: (e) => events.push(e),
  });
  const ms = performance.now() - t0;
  assert.equal(result.complete, true);
  assert.equal(result.attempts, 4);
  assert.ok(ms < 10_000, `took ${ms} ms: it waited for the dead holder's leases`);
  assert.equal(events.some((e) => e.type === "waiting"), false);
  await home.close();
});

Deno.test("runExperiment() renews a lease while a long attempt runs, so no other run takes the cell", async () => {
  const home = await memoryHome();
  const bundle = wordBundle(2);
  // Each attempt lasts over three lease times: only the heartbeat keeps the lease alive.
  const slow = [cmd("slow", "sleep 1; cat docs/q.txt > out/answer.txt")];
  const plan = planExperiment(bundle, slow, {});
  const [a, b] = await Promise.all(
    [0, 1].map(() => runOn(home, bundle, slow, plan, { leaseMs: 300, parallel: 2 })),
  );
  assert.equal(a.complete && b.complete, true);
  assert.equal(a.attempts + b.attempts, 2);
  assert.equal((await home.state.attemptHistory(plan.id)).length, 2);
  await home.close();
});

Deno.test("runExperiment() with slow cells leases no more than the cells about to start", async () => {
  const home = await memoryHome();
  const bundle = wordBundle(8);
  // Each attempt takes a minute on the run's timer (an agent CLI's pace).
  const timer = fakeTimer();
  const seen = { started: 0, now: 0, peak: 0 };
  const slow = copying("slow", () => timer.sleep(60_000), seen);
  const plan = planExperiment(bundle, [slow], {});
  const leased = async () =>
    (await Promise.all([...plan.cells].map((c) => home.state.leaseOf(plan.id, c.key))))
      .filter((l) => l !== null).length;
  let ended = false;
  const running = runOn(home, bundle, [slow], plan, { parallel: 2, timer, leaseMs: 600_000 })
    .finally(() => ended = true);
  const held: number[] = [];
  for (let round = 1; round <= 4; round++) {
    await until(() => seen.started === 2 * round);
    // The last round's records released their leases once committed (group_commit.ts may
    // wait a few milliseconds for records that come together).
    for (let i = 0; i < 1000; i++) {
      if ((await home.state.attemptHistory(plan.id)).length === 2 * (round - 1)) break;
      await new Promise((r) => setTimeout(r, 10));
    }
    held.push(await leased());
    await timer.advance(60_000);
  }
  while (!ended) await timer.advance(60_000);
  const result = await running;
  assert.equal(result.complete, true);
  // Two workers: two cells leased at a time, none held ahead for later.
  assert.deepEqual(held, [2, 2, 2, 2]);
  assert.equal(await leased(), 0);
  await home.close();
});

Deno.test("runExperiment() in two processes on fast cells runs every cell exactly once", async () => {
  const dir = await Deno.makeTempDir();
  const files = memoryBlobStore();
  // Two handles on one state file, as two processes on one home have.
  const stores = await Promise.all(
    [0, 1].map(() => openKvStateStore(`${dir}/state.kv`, files)),
  );
  const bundle = wordBundle(50);
  const cands = [builtinCandidate("reference", bundle)];
  const plan = planExperiment(bundle, cands, { repetitions: 4 });
  const [a, b] = await Promise.all(
    stores.map((state) =>
      runExperiment({
        services: composeServices(),
        state,
        blobs: state.blobs,
        worldsDir: `${dir}/worlds`,
        bundle,
        plan,
        candidates: cands,
        runner: pool,
        room: "words",
        trust: "ad-hoc",
        parallel: 4,
        maxPollMs: 100,
      })
    ),
  );
  assert.equal(a.complete && b.complete, true);
  // Between them (how they share fast cells depends on timing: one may do most of them).
  assert.equal(a.attempts + b.attempts, 200);
  const history = await stores[0].attemptHistory(plan.id);
  assert.equal(history.length, 200);
  assert.ok(history.every((r) => r.tryNo === 1));
  assert.equal(new Set(history.map((r) => `${r.caseId}/${r.repetition}`)).size, 200);
  // Their evidence was committed with the records (no blob file), and reads back.
  assert.equal(files.size(), 0);
  for (const r of history.slice(0, 20)) {
    const ev = await getJson<
      { cell: { caseId: string }; checker: { verdict: { reward: number } } }
    >(
      stores[1].blobs,
      r.evidenceRef!,
    );
    assert.equal(ev?.cell.caseId, r.caseId);
    assert.equal(ev?.checker.verdict.reward, r.verdict!.reward);
  }
  for (const cell of plan.cells) assert.equal(await stores[1].leaseOf(plan.id, cell.key), null);
  stores.forEach((s) => s.close());
  await Deno.remove(dir, { recursive: true });
});

Deno.test("runExperiment() fails when a record cannot be committed, and counts only the cells whose commit landed", async () => {
  const home = await memoryHome();
  const bundle = wordBundle(6);
  const cands = [builtinCandidate("reference", bundle)];
  const plan = planExperiment(bundle, cands, { repetitions: 4 });
  let commits = 0;
  const failing = {
    ...home.state,
    putAttempts: (...args: Parameters<typeof home.state.putAttempts>) =>
      // Quick records share commits (group_commit.ts): the second fails.
      ++commits > 1 ? Promise.reject(new Error("disk full")) : home.state.putAttempts(...args),
  };
  const events: ProgressEvent[] = [];
  await assert.rejects(
    () =>
      runExperiment({
        services: composeServices(),
        state: failing,
        blobs: home.blobs,
        worldsDir: home.worldsDir,
        bundle,
        plan,
        candidates: cands,
        runner: pool,
        room: "words",
        trust: "ad-hoc",
        onEvent: (e) => events.push(e),
      }),
    /disk full/,
  );
  const counted = events.filter((e) => e.type === "attempt").length;
  const stored = (await home.state.attemptHistory(plan.id)).length;
  assert.ok(stored > 0 && stored < 24, `${stored} stored`);
  assert.equal(counted, stored);
  await home.close();
});

Deno.test("runExperiment() holds its worker back while 16 records are on their way, and lets it go once the oldest commit lands", async () => {
  const home = await memoryHome();
  const bundle = wordBundle(10);
  const seen = { started: 0, now: 0, peak: 0 };
  const cands = [copying("quick", () => Promise.resolve(), seen)];
  const plan = planExperiment(bundle, cands, { repetitions: 4 });
  // The first two commits wait for their gates.
  const gates = [Promise.withResolvers<void>(), Promise.withResolvers<void>()];
  let commits = 0;
  const slow = {
    ...home.state,
    putAttempts: async (...args: Parameters<typeof home.state.putAttempts>) => {
      const gate = gates[commits++];
      if (gate) await gate.promise;
      return home.state.putAttempts(...args);
    },
  };
  const running = runExperiment({
    services: composeServices(),
    state: slow,
    blobs: home.blobs,
    worldsDir: home.worldsDir,
    bundle,
    plan,
    candidates: cands,
    runner: pool,
    room: "words",
    trust: "ad-hoc",
    parallel: 1,
  });
  /** Cells started once `n` have, or once `turns` turns of the event loop have passed. */
  const startedBy = async (n: number, turns = 2_000) => {
    for (let turn = 0; turn < turns && seen.started < n; turn++) {
      await new Promise((r) => setTimeout(r, 0));
    }
    return seen.started;
  };
  // The first record's commit waits; 15 more queue behind it, then the worker waits.
  assert.equal(await startedBy(16), 16);
  assert.equal(await startedBy(17, 100), 16, "a 17th cell started with 16 records on their way");
  // The oldest commit (1 record) lands: one more cell runs, though its own commit has not.
  gates[0].resolve();
  assert.equal(await startedBy(17), 17);
  assert.equal(await startedBy(18, 100), 17);
  gates[1].resolve();
  const result = await running;
  assert.equal(result.complete, true);
  assert.equal(seen.started, 40);
  await home.close();
});

Deno.test("runExperiment() lets a world's directory be kept only when its candidate returned, isolated and without a fault", async () => {
  const bundle = wordBundle(1);
  const base = composeServices();
  const removed: Record<string, boolean | undefined> = {};
  const worlds = {
    ...base.worlds,
    async create(...args: Parameters<typeof base.worlds.create>) {
      const w = await base.worlds.create(...args);
      return {
        ...w,
        remove(how?: { reusable?: boolean }) {
          removed[Deno.readTextFileSync(`${w.dir}/docs/who`)] = how?.reusable;
          return w.remove(how);
        },
      };
    },
  };
  const ending = (isolated: boolean, status: "completed" | "fault") => ({
    status,
    ...(status === "fault" ? { message: "the host failed" } : {}),
    usage: { ...NO_USAGE },
    billedMicros: 0,
    listMicros: null,
    isolated,
    evidence: {},
  });
  let late: ReturnType<typeof setTimeout> | undefined;
  const named = (name: string, run: Candidate["run"]): Candidate => ({
    name,
    identity: { kind: "test", name },
    async run(ctx) {
      Deno.writeTextFileSync(`${ctx.worldDir}/docs/who`, name);
      return await run(ctx);
    },
  });
  const candidates = [
    named("isolated", () => Promise.resolve(ending(true, "completed"))),
    named("not-isolated", () => Promise.resolve(ending(false, "completed"))),
    named("fault", () => Promise.resolve(ending(true, "fault"))),
    // Never returns within its limit and grace: the engine's backstop ends the attempt.
    named("deaf", () =>
      new Promise((resolve) => {
        late = setTimeout(() => resolve(ending(true, "completed")), 20_000);
      })),
  ];
  const home = await memoryHome();
  const plan = planExperiment(bundle, candidates, { timeoutMs: 1000 });
  try {
    await runInHome(home, {
      bundle,
      plan,
      candidates,
      runner: pool,
      stopGraceMs: 50,
      services: { ...base, worlds },
    });
    assert.deepEqual(removed, {
      isolated: true,
      "not-isolated": false,
      fault: false,
      deaf: false,
    });
  } finally {
    clearTimeout(late);
    await home.close();
  }
});
