/**
 * Reading a job as it is: from memory when this runner runs it, else from the store, where
 * a running job whose process has gone is recorded as failed, orphaned; and waiting for a
 * job to end, forwarding its progress.
 */
import type { JobRecord } from "../../core/jobs.ts";
import { notFound, type Runner, sleep } from "./runner_state.ts";

/** Whether the runner of a running job is alive (in this process, or its process runs). */
export async function ownerAlive(r: Runner, job: JobRecord): Promise<boolean> {
  if (job.owner === r.owner) return r.local.has(job.id);
  if (job.pid === r.proc.pid) return r.proc.owners.has(job.owner);
  return await r.isAlive(job.pid);
}

/** Records a running job whose runner is gone as failed, orphaned (unless it ended meanwhile). */
export async function orphan(r: Runner, job: JobRecord): Promise<JobRecord> {
  // Read again now that the owner is known gone: a worker writes its last record before
  // it exits, so a job that ended meanwhile (cancelled, succeeded) keeps how it ended.
  const now = await r.state.getJob(job.id);
  if (now && now.status !== "running") return now;
  const next: JobRecord = {
    ...job,
    status: "failed",
    finishedAt: r.clock().toISOString(),
    reason: "orphaned",
    error: {
      code: "JOB_ORPHANED",
      message:
        `Job ${job.id} stopped: the dvergr process that ran it (pid ${job.pid}) ended before the job did`,
      hint: "Start it again: a benchmark resumes, keeping every cell that has a verdict",
    },
    progress: { ...job.progress, phase: "orphaned" },
  };
  await r.state.putJob(next);
  return next;
}

/** get() of the runner: the job's record as it is now, or null. */
export async function getJob(r: Runner, id: string): Promise<JobRecord | null> {
  const mine = r.local.get(id);
  if (mine) return structuredClone(mine.record);
  const job = await r.state.getJob(id);
  if (job && job.status === "running" && !(await ownerAlive(r, job))) return await orphan(r, job);
  return job;
}

/** The job's record once it has ended, or at `deadline` (a timer time) as it is then. */
export async function pollUntilEnded(
  r: Runner,
  id: string,
  deadline: number,
  onProgress?: (job: JobRecord) => void,
): Promise<JobRecord> {
  for (;;) {
    const mine = r.local.get(id);
    if (mine) {
      // Started by this runner: wait on it, forwarding progress as it comes.
      const listener = () => onProgress?.(structuredClone(mine.record));
      mine.listeners.add(listener);
      try {
        await Promise.race([mine.ended, sleep(r, Math.max(0, deadline - r.timer.now()))]);
      } finally {
        mine.listeners.delete(listener);
      }
      return (await getJob(r, id)) ?? structuredClone(mine.record);
    }
    const job = await getJob(r, id);
    if (!job) throw notFound(id);
    if (job.status !== "running" || r.timer.now() >= deadline) return job;
    onProgress?.(job);
    await sleep(r, Math.min(250, Math.max(0, deadline - r.timer.now())));
  }
}
