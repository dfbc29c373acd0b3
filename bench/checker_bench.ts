// A bench script: its figures on the console are its output.
// deno-lint-ignore-file no-console
/**
 * Checker sandbox throughput and cold start:
 * `deno run --allow-read --allow-run --allow-env bench/checker_bench.ts [calls]` (default
 * 2,000 calls; without --allow-run the workers are threads instead of processes).
 *
 * - cold start: a new pool until its first verdict (the worker process starts, loads QuickJS,
 *   prepares the checker);
 * - warm: verdicts per second over `calls` calls, all submitted at once, for a small
 *   checker that does not touch `edn` and for one that parses its answer with `edn.parse`
 *   (answered by the host's reader through the worker's bridge). Every call starts from a
 *   restored snapshot of the state right after the checker loaded. Then the resident memory
 *   of each worker process (`/proc/PID/status`: RSS, of which file-backed pages of the deno
 *   executable shared by every deno process).
 * - on demand: 1,000 calls made 4 at a time (as a `--parallel 4` job's cells make them) on a
 *   pool of at most 4 workers: how many workers it started.
 */
import { createCheckerPool } from "../sandbox/checker_pool.ts";
import type { CheckerInput } from "../core/checker.ts";

const CALLS = Number(Deno.args[0] ?? 2000);

const INPUT: CheckerInput = {
  files: { "/out/answer.edn": '{:total 4210 :account "1200" :date "2024-03-01"}' },
  params: { fields: ["total", "account", "date"] },
  gold: { total: 4210, account: "1200", date: "2024-03-01" },
  fetched: {},
  judgements: {},
};

const PLAIN = `export function check({ params, gold }) {
  const checks = {};
  for (const f of params.fields) checks[f] = gold[f] !== undefined;
  return { checks, reward: 1 };
}`;

const WITH_EDN = `export function check({ files, params, gold }) {
  const answer = edn.parse(files["/out/answer.edn"]);
  const checks = {};
  for (const f of params.fields) checks[f] = answer[f] === gold[f];
  const right = Object.values(checks).filter(Boolean).length;
  return { checks, reward: right / params.fields.length };
}`;

async function coldStart(): Promise<number> {
  const pool = createCheckerPool({ workers: 1 });
  const t0 = performance.now();
  const run = await pool.check(PLAIN, INPUT);
  const ms = performance.now() - t0;
  pool.close();
  if (!run.ok) throw new Error(`cold start failed: ${run.message}`);
  return ms;
}

/** A /proc file's text, or "" (Deno lets only --allow-all read /proc; cat may). */
function readProc(path: string): string {
  try {
    const out = new Deno.Command("cat", { args: [path], stderr: "null" }).outputSync();
    return out.success ? new TextDecoder().decode(out.stdout) : "";
  } catch {
    return "";
  }
}

/** "RSS 74 MiB (file-backed 42, peak 80)" of each live worker process, from /proc. */
function workerMemory(pids: number[]): string {
  return pids.map((pid) => {
    const status = readProc(`/proc/${pid}/status`);
    const mib = (k: string) =>
      (Number(new RegExp(`${k}:\\s+(\\d+)`).exec(status)?.[1] ?? NaN) / 1024).toFixed(0);
    return status
      ? `RSS ${mib("VmRSS")} MiB (file-backed ${mib("RssFile")}, peak ${mib("VmHWM")})`
      : "RSS unknown (no /proc)";
  }).join("; ");
}

async function warm(
  source: string,
  workers: number,
): Promise<{ perSecond: number; ms: number; kind: string; memory: string }> {
  const pool = createCheckerPool({ workers });
  try {
    // Warm every worker (and V8's tiers for the wasm) before measuring.
    await Promise.all(Array.from({ length: workers * 20 }, () => pool.check(source, INPUT)));
    const t0 = performance.now();
    const runs = await Promise.all(
      Array.from({ length: CALLS }, () => pool.check(source, INPUT)),
    );
    const ms = performance.now() - t0;
    const failed = runs.find((r) => !r.ok);
    if (failed && !failed.ok) throw new Error(`a call failed: ${failed.message}`);
    const stats = pool.stats();
    return {
      perSecond: CALLS / (ms / 1000),
      ms,
      kind: stats.workerKind,
      memory: workerMemory(stats.workerPids),
    };
  } finally {
    pool.close();
  }
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
}

const colds: number[] = [];
for (let i = 0; i < 5; i++) colds.push(await coldStart());
console.log(
  `cold start, new pool → first verdict: median ${median(colds).toFixed(0)} ms ` +
    `(runs: ${colds.map((c) => c.toFixed(0)).join(", ")} ms)`,
);
for (const [name, source] of [["small checker", PLAIN], ["edn.parse checker", WITH_EDN]]) {
  for (const workers of [1, 2]) {
    const { perSecond, ms, kind, memory } = await warm(source, workers);
    console.log(
      `${name}, at most ${workers} ${kind} worker${workers > 1 ? "s" : ""}: ${
        perSecond.toFixed(0)
      } verdicts/s (${CALLS} calls in ${ms.toFixed(0)} ms, ${(ms / CALLS).toFixed(2)} ms each)`,
    );
    if (name === "small checker") console.log(`  worker memory after the run: ${memory}`);
  }
}

{
  const pool = createCheckerPool({ workers: 4 });
  let next = 0;
  const t0 = performance.now();
  await Promise.all(Array.from({ length: 4 }, async () => {
    while (next++ < 1000) {
      const run = await pool.check(PLAIN, INPUT);
      if (!run.ok) throw new Error(`a call failed: ${run.message}`);
    }
  }));
  const ms = performance.now() - t0;
  const { workersStarted, workersPeak } = pool.stats();
  pool.close();
  console.log(
    `1,000 calls 4 at a time, pool of at most 4: ${workersStarted} worker${
      workersStarted === 1 ? "" : "s"
    } started (at most ${workersPeak} at once), ${ms.toFixed(0)} ms`,
  );
}
const loadavg = readProc("/proc/loadavg");
const load = loadavg ? `, load average ${loadavg.split(" ").slice(0, 3).join(" ")}` : "";
console.log(`machine: ${navigator.hardwareConcurrency} cores, Deno ${Deno.version.deno}${load}`);
