import assert from "node:assert/strict";
import { memoryBlobStore } from "../../../adapters/store/memory/blob_store.ts";
import { openKvStateStore } from "../../../adapters/store/kv/state_store.ts";
import { type JobRecord } from "../../../core/ports/state_store.ts";
import { DvergrError } from "../../../core/errors.ts";
import type { OpProgress } from "../../../core/ops/op.ts";
import { createJobRunner, jobProcess } from "../../../adapters/jobs/job_runner.ts";
import { processAlive } from "../../../adapters/system/process_alive.ts";
import { fakeTimer } from "../../helpers/fake_timer.ts";

function waitForAbort(signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) resolve();
    signal.addEventListener("abort", () => resolve(), { once: true });
  });
}

async function store() {
  return await openKvStateStore(":memory:", memoryBlobStore());
}

async function deadPid(): Promise<number> {
  const child = new Deno.Command("true").spawn();
  await child.status;
  return child.pid;
}

Deno.test("createJobRunner().start() returns at once and the job ends succeeded with its result", async () => {
  const state = await store();
  const jobs = createJobRunner(state);
  let release = () => {};
  const gate = new Promise<void>((r) => (release = r));
  const { job } = await jobs.start("benchmark", "books", async (_signal, progress) => {
    progress({ progress: 1, total: 4, faults: 0, phase: "running" });
    await gate;
    return { answer: 42 };
  });
  const running = await jobs.get(job);
  assert.equal(running?.status, "running");
  assert.equal(running?.room, "books");
  const early = await jobs.wait(job, 50);
  assert.equal(early.status, "running", "a short wait answers while the job still runs");
  release();
  const done = await jobs.wait(job, 5000);
  assert.equal(done.status, "succeeded");
  assert.deepEqual(done.result, { answer: 42 });
  assert.equal(done.progress.phase, "done");
  assert.ok(done.finishedAt !== null);
  // Durable: another runner on the same store reads the same record.
  const other = createJobRunner(state);
  assert.deepEqual((await other.get(job))?.result, { answer: 42 });
  await jobs.close();
  state.close();
});

Deno.test("createJobRunner() records a failed job with the DvergrError's code, message and hint", async () => {
  const state = await store();
  const jobs = createJobRunner(state);
  const { job } = await jobs.start("benchmark", null, () => {
    throw new DvergrError("API_KEY_MISSING", "Cannot reach the model: no key", { hint: "Set it" });
  });
  const r = await jobs.wait(job, 5000);
  assert.equal(r.status, "failed");
  assert.deepEqual(r.error, {
    code: "API_KEY_MISSING",
    message: "Cannot reach the model: no key",
    hint: "Set it",
  });
  await jobs.close();
  state.close();
});

Deno.test("createJobRunner() persists progress while the job runs, readable from another runner", async () => {
  const state = await store();
  // Two runners of one process: the reader knows the owner runs.
  const proc = jobProcess();
  const jobs = createJobRunner(state, { persistEveryMs: 10, process: proc });
  let release = () => {};
  const gate = new Promise<void>((r) => (release = r));
  const { job } = await jobs.start("benchmark", "r", async (_s, progress) => {
    progress({ progress: 3, total: 10, faults: 1, phase: "running" });
    await gate;
    return null;
  });
  const reader = createJobRunner(state, { process: proc });
  let seen: JobRecord | null = null;
  for (let i = 0; i < 100; i++) {
    seen = await state.getJob(job);
    if (seen?.progress.done === 3) break;
    await new Promise((r) => setTimeout(r, 10));
  }
  assert.deepEqual(seen?.progress, { done: 3, total: 10, faults: 1, phase: "running" });
  assert.equal((await reader.get(job))?.status, "running", "its owner runs in this process");
  // A runner that does not share the process sees a job of its pid whose runner it does
  // not know: orphaned.
  const stranger = createJobRunner(state);
  assert.equal((await stranger.get(job))?.reason, "orphaned");
  release();
  await jobs.wait(job, 5000);
  await jobs.close();
  state.close();
});

Deno.test("DurableJobRunner.wait() forwards progress to its listener while it waits", async () => {
  const state = await store();
  const jobs = createJobRunner(state);
  let release = () => {};
  const gate = new Promise<void>((r) => (release = r));
  let step: (p: OpProgress) => void = () => {};
  const { job } = await jobs.start("benchmark", "r", async (_s, progress) => {
    step = progress;
    await gate;
    return 1;
  });
  const seen: number[] = [];
  const waiting = jobs.wait(job, 60_000, (r) => seen.push(r.progress.done));
  await new Promise((r) => setTimeout(r, 20));
  step({ progress: 1, total: 2 });
  step({ progress: 2, total: 2 });
  release();
  const r = await waiting;
  assert.equal(r.status, "succeeded");
  assert.deepEqual(seen.slice(0, 2), [1, 2]);
  await jobs.close();
  state.close();
});

Deno.test("DurableJobRunner.wait() answers a running job after its cap, however long asked", async () => {
  const state = await store();
  const timer = fakeTimer({ auto: true });
  const jobs = createJobRunner(state, { maxWaitMs: 60, timer });
  const { job } = await jobs.start("benchmark", "r", async (signal) => {
    await waitForAbort(signal);
    return null;
  });
  const t0 = timer.now();
  const r = await jobs.wait(job, 25_000);
  assert.equal(r.status, "running");
  assert.equal(timer.now() - t0, 60, "it waited its cap on the runner's timer");
  await jobs.close();
  timer.stop();
  state.close();
});

Deno.test("DurableJobRunner.cancel() aborts a local job, which ends cancelled", async () => {
  const state = await store();
  const jobs = createJobRunner(state);
  const { job } = await jobs.start("benchmark", "r", async (signal) => {
    await waitForAbort(signal);
    return { stopped: true };
  });
  const r = await jobs.cancel(job);
  assert.equal(r.status, "cancelled");
  assert.deepEqual(r.result, { stopped: true });
  assert.equal((await state.getJob(job))?.status, "cancelled");
  // Cancelling an ended job changes nothing.
  assert.equal((await jobs.cancel(job)).status, "cancelled");
  await jobs.close();
  state.close();
});

Deno.test("DurableJobRunner.cancel() from another runner stops the job through the store", async () => {
  const state = await store();
  // The owner looks for cancel requests every second of its timer, which a fake one runs fast.
  const timer = fakeTimer({ auto: true });
  const process = jobProcess();
  const owner = createJobRunner(state, { timer, process });
  const { job } = await owner.start("benchmark", "r", async (signal) => {
    await waitForAbort(signal);
    return null;
  });
  const other = createJobRunner(state, { timer, process });
  const r = await other.cancel(job);
  assert.equal(r.status, "cancelled");
  await owner.close();
  timer.stop();
  state.close();
});

Deno.test("DurableJobRunner.recover() records a running job of a dead process as failed, orphaned", async () => {
  const state = await store();
  const pid = await deadPid();
  const base: JobRecord = {
    id: "j-dead",
    kind: "benchmark",
    room: "books",
    status: "running",
    startedAt: "2026-01-01T00:00:00.000Z",
    finishedAt: null,
    progress: { done: 2, total: 6, faults: 0, phase: "running" },
    result: null,
    error: null,
    reason: null,
    pid,
    owner: "gone",
  };
  await state.putJob(base);
  await state.putJob({ ...base, id: "j-ended", status: "succeeded", finishedAt: base.startedAt });
  // A job of this very process whose runner no longer exists is orphaned too (pid reuse).
  await state.putJob({ ...base, id: "j-same-pid", pid: Deno.pid, owner: "not-alive" });
  assert.equal(await processAlive(pid), false);
  assert.equal(await processAlive(Deno.pid), true);
  const jobs = createJobRunner(state);
  assert.equal(await jobs.recover(), 2);
  const r = await state.getJob("j-dead");
  assert.equal(r?.status, "failed");
  assert.equal(r?.reason, "orphaned");
  assert.equal(r?.error?.code, "JOB_ORPHANED");
  assert.deepEqual(r?.progress, { done: 2, total: 6, faults: 0, phase: "orphaned" });
  assert.equal((await state.getJob("j-ended"))?.status, "succeeded");
  assert.equal((await state.getJob("j-same-pid"))?.reason, "orphaned");
  state.close();
});

Deno.test("DurableJobRunner.get() keeps how a job ended when its worker wrote it just before exiting", async () => {
  const state = await store();
  const base: JobRecord = {
    id: "j-race",
    kind: "benchmark",
    room: "books",
    status: "running",
    startedAt: "2026-01-01T00:00:00.000Z",
    finishedAt: null,
    progress: { done: 0, total: 1, faults: 0, phase: "running" },
    result: null,
    error: null,
    reason: null,
    pid: 4_000_000,
    owner: "worker",
  };
  await state.putJob(base);
  // The reader sees "running"; while it asks whether the worker lives, the worker records
  // its cancellation and exits.
  const jobs = createJobRunner(state, {
    isAlive: async () => {
      await state.putJob({ ...base, status: "cancelled", finishedAt: base.startedAt });
      return false;
    },
  });
  const r = await jobs.get("j-race");
  assert.equal(r?.status, "cancelled");
  assert.equal((await state.getJob("j-race"))?.status, "cancelled");
  state.close();
});

Deno.test("DurableJobRunner.get() reads a running job of a dead process as orphaned", async () => {
  const state = await store();
  const pid = await deadPid();
  await state.putJob({
    id: "j1",
    kind: "benchmark",
    room: null,
    status: "running",
    startedAt: "2026-01-01T00:00:00.000Z",
    finishedAt: null,
    progress: { done: 0, total: null, faults: 0, phase: "running" },
    result: null,
    error: null,
    reason: null,
    pid,
    owner: "x",
  });
  const r = await createJobRunner(state).get("j1");
  assert.equal(r?.status, "failed");
  assert.equal(r?.reason, "orphaned");
  state.close();
});

Deno.test("processAlive() counts a zombie (ended, unreaped) as not running", async () => {
  // The shell starts a short child, then becomes `sleep 3`, which never reaps it.
  const parent = new Deno.Command("/bin/sh", {
    args: ["-c", "sleep 0 & echo $!; exec sleep 3"],
    stdout: "piped",
  }).spawn();
  const reader = parent.stdout.pipeThrough(new TextDecoderStream()).getReader();
  const { value } = await reader.read();
  const zombie = Number(value!.trim());
  await new Promise((r) => setTimeout(r, 300));
  assert.equal(await processAlive(zombie), false);
  assert.equal(await processAlive(parent.pid), true);
  parent.kill("SIGKILL");
  await reader.cancel();
  await parent.status;
});
