/**
 * Progress of a benchmark run for people: a bar redrawn in place on a terminal (cells
 * done of the total, faults, elapsed, ETA), plain lines otherwise (at every tenth of the
 * cells, one per fault with its reason, and a line at least every 30 s, so a CI log shows
 * a slow run is alive). Written to a sink (stderr in the CLI, so the terminal test is
 * stderr's).
 */
import type { ProgressEvent } from "../core/engine/run_experiment.ts";
import { stopText } from "../core/bench/sequential.ts";
import { terminalSafe } from "../core/terminal_safe.ts";

export interface ProgressSink {
  /** Writes as it is (the bar's own controls): progress filters the text it shows itself. */
  write(text: string): void;
  /** Redraw a bar in place (a terminal) or print plain lines. */
  isTerminal: boolean;
  /** Milliseconds clock; default performance.now. */
  now?: () => number;
  /** Off a terminal, the longest silence before a line says where the run is (default 30 s). */
  heartbeatMs?: number;
  /** Runs `f` after `ms` and returns what cancels it; default setTimeout. */
  schedule?: (f: () => void, ms: number) => () => void;
}

/** Off a terminal, a line at least this often while cells run. */
export const HEARTBEAT_MS = 30_000;

function scheduleTimeout(f: () => void, ms: number): () => void {
  const id = setTimeout(f, ms);
  return () => clearTimeout(id);
}

/** `m:ss`, or `h:mm:ss` from an hour on. */
export function formatDuration(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const sec = String(s % 60).padStart(2, "0");
  return h > 0 ? `${h}:${String(m).padStart(2, "0")}:${sec}` : `${m}:${sec}`;
}

/** The estimated time left, from this run's pace; null before anything finished. */
export function estimateRemainingMs(
  elapsedMs: number,
  finishedThisRun: number,
  remaining: number,
): number | null {
  if (finishedThisRun <= 0) return null;
  return (elapsedMs / finishedThisRun) * remaining;
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? "" : "s"}`;
}

/** The bar line: `[####······] 12/40 cells · 1 fault · 0:12 elapsed · ETA 0:30`. */
export function progressBar(
  s: { done: number; total: number; faults: number; elapsedMs: number; etaMs: number | null },
  width = 24,
): string {
  const filled = s.total > 0 ? Math.round((s.done / s.total) * width) : width;
  const bar = "#".repeat(filled) + "·".repeat(width - filled);
  const eta = s.etaMs === null ? "" : ` · ETA ${formatDuration(s.etaMs)}`;
  return `[${bar}] ${s.done}/${s.total} cells · ${plural(s.faults, "fault")} · ${
    formatDuration(s.elapsedMs)
  } elapsed${eta}`;
}

/** An event handler that renders progress to `sink`; call `stop()` when the run is over. */
export function createProgress(sink: ProgressSink): {
  onEvent(e: ProgressEvent): void;
  stop(): void;
} {
  const now = sink.now ?? (() => performance.now());
  const schedule = sink.schedule ?? scheduleTimeout;
  const heartbeatMs = sink.heartbeatMs ?? HEARTBEAT_MS;
  const t0 = now();
  let total = 0;
  let done = 0;
  let faults = 0;
  let finished = 0;
  let lastTenth = -1;
  let timer: ReturnType<typeof setInterval> | undefined;
  /** Cancels the pending heartbeat line (off a terminal, while cells run). */
  let cancelHeartbeat: (() => void) | undefined;
  const stopHeartbeat = () => {
    cancelHeartbeat?.();
    cancelHeartbeat = undefined;
  };
  const progressLine = () => `progress: ${progressBar(snapshot()).replace(/^\[[^\]]*\] /, "")}\n`;
  const heartbeat = () => say(progressLine());
  /** A plain line off a terminal: the heartbeat waits its full time from here. */
  const say = (text: string) => {
    sink.write(text);
    if (!sink.isTerminal && cancelHeartbeat !== undefined) {
      stopHeartbeat();
      cancelHeartbeat = schedule(heartbeat, heartbeatMs);
    }
  };

  const snapshot = () => {
    const elapsedMs = now() - t0;
    return {
      done,
      total,
      faults,
      elapsedMs,
      etaMs: estimateRemainingMs(elapsedMs, finished, Math.max(0, total - done)),
    };
  };
  const redraw = () => sink.write(`\r${progressBar(snapshot())}\x1b[K`);

  return {
    onEvent(e) {
      if (e.type === "start") {
        total = e.total - (e.notNeeded ?? 0);
        done = e.kept;
        const kept = e.kept > 0 ? `, ${e.kept} kept from earlier runs` : "";
        const skipped = e.notNeeded ? `, ${e.notNeeded} not needed` : "";
        sink.write(`Experiment ${e.experimentId}: ${plural(e.total, "cell")}${kept}${skipped}\n`);
        if (sink.isTerminal && e.toRun > 0) {
          redraw();
          timer = setInterval(redraw, 1000);
        }
        if (!sink.isTerminal && e.toRun > 0) cancelHeartbeat = schedule(heartbeat, heartbeatMs);
        lastTenth = Math.floor((done / Math.max(1, total)) * 10);
        return;
      }
      if (e.type === "attempt") {
        done = e.done;
        faults = e.faults;
        total = Math.max(total, done);
        finished++;
        const r = e.record;
        if (r.fault) {
          const where = `${r.candidate}${
            r.caseId !== null ? ` case ${r.caseId}` : ""
          } rep ${r.repetition}`;
          const again = e.willRetry ? " (trying again)" : "";
          const line = `fault: ${where}: ${r.fault.source} ${r.fault.kind}: ${
            r.fault.message.split("\n")[0]
          }${again}`;
          // The candidate's name, case and message are shown, never obeyed by the terminal.
          const safe = terminalSafe(line);
          say(sink.isTerminal ? `\r${safe}\x1b[K\n` : `${safe}\n`);
        }
        if (sink.isTerminal) redraw();
        else {
          const tenth = Math.floor((done / Math.max(1, total)) * 10);
          if (tenth > lastTenth) {
            lastTenth = tenth;
            say(progressLine());
          }
        }
        return;
      }
      if (e.type === "stopped") {
        // The cells not needed leave the total, so the bar ends full.
        total = Math.max(done, e.total - e.notNeeded);
        const line = terminalSafe(`stopped: ${stopText(e.comparison)}`); // names candidates
        say(sink.isTerminal ? `\r${line}\x1b[K\n` : `${line}\n`);
        if (sink.isTerminal) redraw();
        return;
      }
      if (e.type === "waiting") {
        const line = `waiting for ${plural(e.cells, "cell")} another process is running` +
          ` (taken over if its ${Math.round(e.leaseMs / 1000)} s lease runs out)`;
        say(sink.isTerminal ? `\r${line}\x1b[K\n` : `${line}\n`);
        if (sink.isTerminal) redraw();
        return;
      }
      if (timer !== undefined) clearInterval(timer);
      timer = undefined;
      stopHeartbeat();
      done = e.done;
      faults = e.faults;
      if (sink.isTerminal) sink.write(`\r${progressBar(snapshot())}\x1b[K\n`);
      if (e.cancelled) sink.write("Stopped: the run was interrupted\n");
    },
    stop() {
      if (timer !== undefined) clearInterval(timer);
      timer = undefined;
      stopHeartbeat();
    },
  };
}
