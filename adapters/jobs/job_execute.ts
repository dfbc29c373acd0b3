/**
 * Running a job's work in this process: its record kept up to date (progress written at
 * most every persistEveryMs, the end always), a cancel request from another process looked
 * for every cancelPollMs, and the outcome recorded (succeeded, failed with the error's
 * code, message and hint, or cancelled).
 */
import { errorData, isDvergrError } from "../../core/errors.ts";
import type { JobRecord, JobWork, Progress } from "../../core/jobs.ts";
import { type LocalJob, type Runner, sleep } from "./runner_state.ts";

/** Runs `work` for `record` in this process, keeping the record up to date. */
export function execute(r: Runner, record: JobRecord, work: JobWork): LocalJob {
  const controller = new AbortController();
  const listeners = new Set<() => void>();
  // Stops the progress write and the cancel poll once the job has ended.
  const stopTimers = new AbortController();
  const writer = progressWriter(r, record, listeners, stopTimers.signal);
  void pollCancel(r, record.id, controller, stopTimers.signal);
  const ended = runWork(r, record, work, controller, stopTimers, writer, listeners);
  const job = { record, controller, ended, listeners };
  r.local.set(record.id, job);
  return job;
}

/** How a job's record reaches the store. */
interface ProgressWriter {
  /** Takes a progress report: listeners hear it at once, the store at most every so often. */
  progress(p: Progress): void;
  /** Writes the record now (after the writes before it). */
  persist(): void;
  /** The writes so far, done. */
  written(): Promise<void>;
}

function progressWriter(
  r: Runner,
  record: JobRecord,
  listeners: Set<() => void>,
  stopped: AbortSignal,
): ProgressWriter {
  let lastWrite = 0;
  let writeDue = false;
  let writing: Promise<void> = Promise.resolve();
  const persist = () => {
    lastWrite = r.timer.now();
    const snapshot = structuredClone(record);
    writing = writing.then(() => r.state.putJob(snapshot)).catch((e) =>
      r.log(`dvergr: cannot record progress of job ${record.id}: ${e}`)
    );
  };
  const progress = (p: Progress) => {
    if (record.status !== "running") return;
    record.progress = {
      done: p.progress,
      total: p.total ?? record.progress.total,
      faults: p.faults ?? record.progress.faults,
      phase: p.phase ?? p.message ?? record.progress.phase,
    };
    for (const l of listeners) l();
    if (writeDue) return;
    const wait = r.persistEveryMs - (r.timer.now() - lastWrite);
    if (wait <= 0) persist();
    else {
      writeDue = true;
      void sleep(r, wait, stopped).then(() => {
        writeDue = false;
        if (record.status === "running") persist();
      });
    }
  };
  return { progress, persist, written: () => writing };
}

/** Aborts the job when another process asks it to stop through the store. */
async function pollCancel(
  r: Runner,
  id: string,
  controller: AbortController,
  stopped: AbortSignal,
): Promise<void> {
  while (!stopped.aborted) {
    await sleep(r, r.cancelPollMs, stopped);
    if (stopped.aborted) return;
    if (await r.state.jobCancelRequested(id).catch(() => false)) controller.abort();
  }
}

/** The work, then its outcome in the record, written; the job then leaves `r.local`. */
async function runWork(
  r: Runner,
  record: JobRecord,
  work: JobWork,
  controller: AbortController,
  stopTimers: AbortController,
  writer: ProgressWriter,
  listeners: Set<() => void>,
): Promise<void> {
  try {
    // A macrotask first, so start() returns before any of the work runs.
    await new Promise((resolve) => setTimeout(resolve, 0));
    const result = await work(controller.signal, writer.progress);
    record.result = result ?? null;
    record.status = controller.signal.aborted ? "cancelled" : "succeeded";
  } catch (e) {
    if (controller.signal.aborted) record.status = "cancelled";
    else {
      record.status = "failed";
      record.error = errorData(e, {
        what: "The job",
        where: "the server's log (stderr) has the stack",
      });
      if (!isDvergrError(e)) {
        r.log(
          `dvergr: job ${record.id} (${record.kind}) failed: ${e instanceof Error ? e.stack : e}`,
        );
      }
    }
  } finally {
    stopTimers.abort();
    if (record.status === "cancelled" && r.closing) record.reason = "server-stopped";
    record.finishedAt = r.clock().toISOString();
    record.progress = {
      ...record.progress,
      phase: record.status === "succeeded" ? "done" : record.status,
    };
    writer.persist();
    await writer.written();
    r.local.delete(record.id);
    for (const l of listeners) l();
  }
}
