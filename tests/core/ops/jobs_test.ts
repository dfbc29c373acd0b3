import assert from "node:assert/strict";
import { memoryHome } from "../../../adapters/store/memory/home.ts";
import { DvergrError } from "../../../core/errors.ts";
import { callOp } from "../../../core/ops/registry.ts";
import type { OpContext } from "../../../core/ops/op.ts";
import { createJobRunner } from "../../../adapters/jobs/job_runner.ts";
import { jobCancel, jobList, jobStatus } from "../../../core/ops/jobs.ts";
import { composeServices } from "../../../adapters/compose.ts";

function waitForAbort(signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) resolve();
    signal.addEventListener("abort", () => resolve(), { once: true });
  });
}

async function opContext(): Promise<{ ctx: OpContext; close(): Promise<void> }> {
  const home = await memoryHome();
  const jobs = createJobRunner(home.state);
  const ctx: OpContext = {
    home,
    services: composeServices(),
    runner: { check: () => Promise.reject(new Error("no checker in job tests")) } as never,
    env: () => undefined,
    cwd: Deno.cwd(),
    clock: () => new Date(),
    jobs,
  };
  return {
    ctx,
    async close() {
      await jobs.close();
      await home.close();
    },
  };
}

Deno.test("job_status {job, wait_ms} answers when the job ends, with progress and result", async () => {
  const { ctx, close } = await opContext();
  const { job } = await ctx.jobs!.start("benchmark", "books", async (_s, progress) => {
    progress({ progress: 2, total: 2, faults: 0, phase: "running" });
    await new Promise((r) => setTimeout(r, 30));
    return { experiment: "e1" };
  });
  const r = await callOp(jobStatus, ctx, {
    job,
    wait_ms: 5000,
  });
  assert.equal(r.job, job);
  assert.equal(r.status, "succeeded");
  assert.deepEqual(r.progress, { done: 2, total: 2, faults: 0, phase: "done" });
  assert.deepEqual(r.result, { experiment: "e1" });
  await close();
});

Deno.test("job_status refuses wait_ms above 25000 and names an unknown job", async () => {
  const { ctx, close } = await opContext();
  await assert.rejects(
    () => callOp(jobStatus, ctx, { job: "x", wait_ms: 30_000 }),
    (e: DvergrError) => e.code === "USAGE" && /wait_ms/.test(e.message),
  );
  await assert.rejects(
    () => callOp(jobStatus, ctx, { job: "nope" }),
    (e: DvergrError) => e.code === "NOT_FOUND" && /"nope"/.test(e.message) && !!e.hint,
  );
  await assert.rejects(
    () => callOp(jobCancel, ctx, { job: "nope" }),
    (e: DvergrError) => e.code === "NOT_FOUND",
  );
  await close();
});

Deno.test("job_list lists jobs newest first, only a room's when given; job_cancel stops one", async () => {
  const { ctx, close } = await opContext();
  const a = await ctx.jobs!.start("benchmark", "a", () => Promise.resolve(1));
  await new Promise((r) => setTimeout(r, 5));
  const b = await ctx.jobs!.start("benchmark", "b", async (signal) => {
    await waitForAbort(signal);
    return null;
  });
  const all = await callOp(jobList, ctx, {});
  assert.deepEqual(all.jobs.map((j) => j.job), [b.job, a.job]);
  const onlyA = await callOp(jobList, ctx, { room: "a" });
  assert.deepEqual(onlyA.jobs.map((j) => j.job), [a.job]);
  const cancelled = await callOp(jobCancel, ctx, { job: b.job });
  assert.equal(cancelled.status, "cancelled");
  await close();
});
