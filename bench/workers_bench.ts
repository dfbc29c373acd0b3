// A bench script: its figures on the console are its output.
// deno-lint-ignore-file no-console
/**
 * Workers on PostgreSQL: cells per second against the number of `dvergr worker` processes
 * (1, 2, 4, 8 on this machine, each --parallel 2) on one experiment whose candidate sleeps
 * 1 s in its sandbox, the scaling efficiency (rate with N workers ÷ N × the rate with one),
 * and the per-cell overhead against the same experiment on the embedded KV home
 * (`dvergr benchmark --parallel 2`, one process). Starts a throwaway PostgreSQL cluster of
 * Debian's server (as the tests do); says so and ends when none is installed.
 *
 *   deno run <dvergr's permissions> bench/workers_bench.ts [--workers 1,2,4,8] [--cells 64]
 */
import { fileURLToPath } from "node:url";
import { join } from "node:path";
import postgres from "postgres";
import { startPostgres } from "../tests/helpers/postgres.ts";
import { DVERGR_RUN_FLAGS } from "../core/permissions.ts";

const ROOT = fileURLToPath(new URL("../", import.meta.url));
const BUNDLE = join(ROOT, "examples/workflows/invoice-fields");
const CASES = 5;
const PARALLEL = 2;

function flag(name: string, fallback: string): string {
  const i = Deno.args.indexOf(`--${name}`);
  return i >= 0 ? Deno.args[i + 1] : fallback;
}
const WORKERS = flag("workers", "1,2,4,8").split(",").map(Number);
const REPS = Math.max(1, Math.round(Number(flag("cells", "64")) / CASES));
const CELLS = REPS * CASES;

function dvergr(args: string[], cwd: string): Deno.Command {
  return new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      ...DVERGR_RUN_FLAGS,
      "--config",
      join(ROOT, "deno.json"),
      `${ROOT}main.ts`,
      ...args,
    ],
    cwd,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  });
}

/** The load averages (read by cat: Deno opens /proc only to --allow-all). */
function loadavg(): string {
  const out = new Deno.Command("cat", { args: ["/proc/loadavg"], stdout: "piped" }).outputSync();
  return new TextDecoder().decode(out.stdout).split(" ").slice(0, 3).join(" ");
}
const benchArgs = ["--candidate", "nap=cmd:sleep 1", "--repetitions", String(REPS)];

/** Seconds for N workers to run the experiment, from their start to its closing. */
async function withWorkers(url: string, n: number): Promise<number> {
  const home = await Deno.makeTempDir();
  const q = await dvergr(
    ["benchmark", BUNDLE, ...benchArgs, "--home", home, "--store", url, "--enqueue", "--json"],
    home,
  ).output();
  if (!q.success) throw new Error(new TextDecoder().decode(q.stderr));
  const sql = postgres(url, { max: 1, onnotice: () => {} });
  const t0 = performance.now();
  const workers = [];
  for (let i = 0; i < n; i++) {
    const dir = await Deno.makeTempDir();
    workers.push(
      dvergr(["worker", "--store", url, "--home", dir, "--parallel", String(PARALLEL)], dir)
        .spawn(),
    );
  }
  const deadline = Date.now() + 30 * 60_000;
  for (;;) {
    const [{ c }] = await sql`select count(*)::int as c from dvergr_queue where state = 'closed'`;
    if (c === 1 || Date.now() > deadline) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  const seconds = (performance.now() - t0) / 1000;
  for (const w of workers) {
    w.kill("SIGTERM");
    await w.output();
  }
  await sql.end();
  return seconds;
}

/** Seconds for one `dvergr benchmark --parallel 2` on the embedded home. */
async function onKvHome(): Promise<number> {
  const home = await Deno.makeTempDir();
  const t0 = performance.now();
  const r = await dvergr(
    ["benchmark", BUNDLE, ...benchArgs, "--home", home, "--parallel", String(PARALLEL)],
    home,
  ).output();
  if (!r.success) throw new Error(new TextDecoder().decode(r.stderr));
  return (performance.now() - t0) / 1000;
}

const cluster = await startPostgres();
if (cluster === null) {
  console.log("No PostgreSQL server installed (apt-get install postgresql): nothing measured");
  Deno.exit(0);
}
try {
  console.log(`${CELLS} cells of a candidate that sleeps 1 s; each worker --parallel ${PARALLEL}`);
  console.log(`load average at start: ${loadavg()}`);
  const kv = await onKvHome();
  const ideal = CELLS / PARALLEL;
  console.log(
    `KV home, one benchmark --parallel ${PARALLEL}: ${kv.toFixed(1)} s, ${
      (CELLS / kv).toFixed(2)
    } cells/s, ${((kv - ideal) * PARALLEL / CELLS * 1000).toFixed(0)} ms overhead per cell`,
  );
  let one = 0;
  for (const n of WORKERS) {
    const s = await withWorkers(await cluster.database(), n);
    const rate = CELLS / s;
    if (n === 1) one = rate;
    const slots = n * PARALLEL;
    const overhead = (s - CELLS / slots) * slots / CELLS * 1000;
    console.log(
      `${n} worker${n === 1 ? " " : "s"}: ${s.toFixed(1)} s, ${rate.toFixed(2)} cells/s, ` +
        `efficiency ${one > 0 ? (rate / (n * one) * 100).toFixed(0) : "–"}%, ` +
        `${overhead.toFixed(0)} ms overhead per cell (start-up included), load ${loadavg()}`,
    );
  }
} finally {
  await cluster.stop();
}
