// A bench script: its figures on the console are its output.
// deno-lint-ignore-file no-console
/**
 * Clojure checkers (checker.clj in SCI inside the QuickJS sandbox), cold and warm:
 * `deno run <dvergr permissions> bench/clojure_bench.ts [verdicts]` (default 200).
 *
 * - the case-pack checker (docs/compatibility.md §6.5, tests/fixtures/clojure/case_pack_checker.clj)
 *   on a case pack made by `dvergr cases` from examples/tables/bookings.csv, each case
 *   graded with its own gold as the answer;
 * - a heavier checker (token F1 over eight clause types, ~4 KB of quotes per answer,
 *   tests/fixtures/clojure/clause_f1_checker.clj).
 *
 * Cold: a new pool until its first verdict (a new worker process starts SCI, then loads the
 * checker), with SCI's boot image cache cold (the worker boots SCI and offers its image) and
 * warm (the worker restores the image: sandbox/sci_image_cache.ts), alternating, in a cache
 * directory of the bench's own. Warm: one worker, one call at a time (per-verdict mean, p50,
 * p90, and the worker process's CPU time per verdict, which a loaded machine moves far less
 * than the wall time), then two workers with every call submitted at once (verdicts per
 * second). Each line carries the load average.
 */
import { join } from "node:path";
import { createCheckerPool } from "../sandbox/checker_pool.ts";
import type { CheckerInput } from "../core/checker.ts";
import { checkerInputFor } from "../core/bundle/checker_input.ts";
import { parseBundle } from "../core/bundle/parse.ts";
import { readBundleDir } from "../adapters/files/bundle_dir.ts";
import { writeEdn } from "../core/edn/write.ts";
import { DVERGR_PERMISSIONS } from "../core/permissions.ts";
import { loadAverage, reportFigure } from "./figures.ts";

const VERDICTS = Number(Deno.args[0] ?? 200);
const root = new URL("..", import.meta.url).pathname;
const fixture = (name: string) => Deno.readTextFileSync(join(root, "tests/fixtures/clojure", name));

interface Workload {
  name: string;
  source: string;
  inputs: CheckerInput[];
}

async function casePack(): Promise<Workload> {
  const dir = await Deno.makeTempDir({ prefix: "dvergr-clj-bench-" });
  try {
    const out = join(dir, "bookings");
    const made = await new Deno.Command(Deno.execPath(), {
      args: [
        "run",
        ...DVERGR_PERMISSIONS,
        join(root, "main.ts"),
        "cases",
        join(root, "examples/tables/bookings.csv"),
        "--id",
        "Beleg",
        "--inputs",
        "Datum,Betrag,Buchungstext",
        "--outcome",
        "Gegenkonto:exact",
        "--outcome",
        "BU:exact",
        "--outcome",
        "Netto:number:0.01",
        "--shared",
        join(root, "examples/tables/kontenrahmen.txt"),
        "--out",
        out,
      ],
      stdout: "null",
      stderr: "piped",
    }).output();
    if (!made.success) throw new Error(new TextDecoder().decode(made.stderr));
    const fb = await readBundleDir(out);
    fb.files.delete("checker.js");
    fb.files.set("checker.clj", fixture("case_pack_checker.clj"));
    const bundle = parseBundle(fb);
    const inputs = bundle.cases.map((c) => {
      const expected = (c.gold as { expected: Record<string, unknown> }).expected;
      return checkerInputFor(bundle, {
        files: { "/out/answer.edn": writeEdn(expected) },
        caseId: c.id,
      });
    });
    return { name: "case-pack checker (§6.5)", source: bundle.checker, inputs };
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

function clauses(): Workload {
  const words = "party agreement shall terminate notice days written consent assign " +
    "liability damages exceed fees paid governing law state courts exclusive audit records";
  const vocab = words.split(" ");
  let seed = 7;
  const rand = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
  const sentence = (n: number) =>
    Array.from({ length: n }, () => vocab[Math.floor(rand() * vocab.length)]).join(" ");
  const types = ["Governing Law", "Anti-Assignment", "Cap On Liability", "Audit Rights"]
    .concat(["Exclusivity", "Change Of Control", "Non-Compete", "Termination For Convenience"]);
  const files = new Map([
    ["workflow.edn", '{:title "Clauses" :task "Review /docs/contract.txt."}'],
    ["checker.clj", fixture("clause_f1_checker.clj")],
    ["fixtures/docs/contract.txt", "…"],
  ]);
  const bundle = parseBundle({ name: "clauses", files });
  const inputs = Array.from({ length: 20 }, () => {
    const gold = new Map<string, unknown>();
    const review = new Map<string, unknown>();
    for (const [i, t] of types.entries()) {
      const span = sentence(80);
      const present = i % 3 !== 2;
      gold.set(t, { present, spans: present ? [span, sentence(40)] : [] });
      review.set(t, present ? { present: true, quote: span.slice(0, 400) } : { present: false });
    }
    const b = parseBundle({
      name: "clauses",
      files: new Map([...files, ["gold.edn", writeEdn({ clauses: gold })]]),
    });
    return checkerInputFor(b, { files: { "/out/review.edn": writeEdn(review) } });
  });
  return { name: "clause F1 checker (heavier)", source: bundle.checker, inputs };
}

/**
 * CPU time (user + system, ms) the worker processes `pids` used so far, from /proc; null
 * where there is none or the workers are threads. On a shared machine the wall time per
 * verdict moves with the load, the worker's CPU time much less.
 */
function workersCpuMs(pids: readonly number[] | undefined): number | null {
  if (!pids || pids.length === 0) return null;
  try {
    let ticks = 0;
    for (const pid of pids) {
      // The fields after the command's closing parenthesis: utime, stime are the 12th, 13th.
      // Read by cat: Deno lets only --allow-all read another process's /proc entries.
      const out = new Deno.Command("cat", { args: [`/proc/${pid}/stat`], stderr: "null" })
        .outputSync();
      if (!out.success) return null;
      const stat = new TextDecoder().decode(out.stdout);
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      ticks += Number(fields[11]) + Number(fields[12]);
    }
    return ticks * 10; // USER_HZ is 100 on Linux
  } catch {
    return null;
  }
}

function quantile(xs: number[], q: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))];
}

/** A cache directory of the bench's own, so its cold and warm starts are what they say. */
const cacheHome = await Deno.makeTempDir({ prefix: "dvergr-clj-cache-" });
Deno.env.set("XDG_CACHE_HOME", cacheHome);
const imageDir = join(cacheHome, "dvergr", "sci-images");

async function imageKept(): Promise<boolean> {
  // The pool writes the image after its worker's ready message.
  for (let i = 0; i < 300; i++) {
    try {
      if ([...Deno.readDirSync(imageDir)].some((e) => e.name.endsWith(".img"))) return true;
    } catch {
      // Not there yet.
    }
    await new Promise((ok) => setTimeout(ok, 100));
  }
  return false;
}

interface ColdStart {
  ms: number;
  bootMs?: number;
  load: string;
}

/** A new pool's first verdict, with the boot image cache cold (emptied) or warm. */
async function firstVerdict(w: Workload, cache: "cold" | "warm"): Promise<ColdStart> {
  if (cache === "cold") await Deno.remove(imageDir, { recursive: true }).catch(() => {});
  else if (!(await imageKept())) throw new Error("no boot image was kept");
  const before = await loadAverage();
  const pool = createCheckerPool({ workers: 1 });
  const t0 = performance.now();
  const first = await pool.check(w.source, w.inputs[0]);
  const ms = performance.now() - t0;
  const stats = pool.stats().clojure;
  pool.close();
  if (!first.ok) throw new Error(`${w.name}: ${first.message}`);
  if ((stats?.lastBootRestored === true) !== (cache === "warm")) {
    throw new Error(`${w.name}: the image cache was not ${cache}`);
  }
  return { ms, bootMs: stats?.lastBootMs, load: `${before} → ${await loadAverage()}` };
}

async function measure(w: Workload, heavy: boolean): Promise<void> {
  const starts = { cold: [] as ColdStart[], warm: [] as ColdStart[] };
  for (let round = 0; round < 3; round++) {
    for (const cache of ["cold", "warm"] as const) starts[cache].push(await firstVerdict(w, cache));
  }
  const loadBefore = await loadAverage();
  const inputAt = (i: number) => w.inputs[i % w.inputs.length];
  const cold = createCheckerPool({ workers: 1 });
  const first = await cold.check(w.source, inputAt(0));
  if (!first.ok) throw new Error(`${w.name}: ${first.message}`);
  const times: number[] = [];
  const pids = cold.stats().clojure?.workerPids;
  const cpuBefore = workersCpuMs(pids);
  for (let i = 0; i < VERDICTS; i++) {
    const t = performance.now();
    const run = await cold.check(w.source, inputAt(i));
    times.push(performance.now() - t);
    if (!run.ok) throw new Error(`${w.name}: ${run.message}`);
    if (run.verdict.reward <= 0) throw new Error(`${w.name}: a gold answer scored 0`);
  }
  const cpuAfter = workersCpuMs(pids);
  cold.close();
  const mean = times.reduce((a, b) => a + b, 0) / times.length;
  const cpu = cpuBefore !== null && cpuAfter !== null
    ? `; the worker's CPU time ${((cpuAfter - cpuBefore) / VERDICTS).toFixed(1)} ms/verdict`
    : "";

  const pool = createCheckerPool({ workers: 2 });
  await Promise.all([0, 1].map((i) => pool.check(w.source, inputAt(i))));
  const t1 = performance.now();
  const runs = await Promise.all(
    Array.from({ length: VERDICTS }, (_, i) => pool.check(w.source, inputAt(i))),
  );
  const parallelMs = performance.now() - t1;
  pool.close();
  if (runs.some((r) => !r.ok)) throw new Error(`${w.name}: a parallel call failed`);

  console.log(`${w.name}, ${w.inputs.length} distinct inputs, ${VERDICTS} verdicts`);
  const median = (xs: ColdStart[]) => [...xs].sort((a, b) => a.ms - b.ms)[xs.length >> 1];
  for (const cache of ["cold", "warm"] as const) {
    const line = starts[cache].map((c) => `${c.ms.toFixed(0)} (SCI ${c.bootMs})`).join(", ");
    console.log(
      `  cold, boot image cache ${cache}: first verdict of a new pool ${line} ms ` +
        `(SCI: its start in the worker), load ${starts[cache].map((c) => c.load).join(", ")}`,
    );
  }
  console.log(
    `  warm, 1 worker: ${mean.toFixed(1)} ms/verdict (p50 ${quantile(times, 0.5).toFixed(1)}, ` +
      `p90 ${quantile(times, 0.9).toFixed(1)}), ${(1000 / mean).toFixed(0)} verdicts/s${cpu}`,
  );
  console.log(
    `  warm, 2 workers, all at once: ${(VERDICTS / (parallelMs / 1000)).toFixed(0)} verdicts/s`,
  );
  const load = `${loadBefore} → ${await loadAverage()}`;
  for (const cache of ["warm", "cold"] as const) {
    const m = median(starts[cache]);
    reportFigure({
      target: "5b",
      figure: `${m.ms.toFixed(0)} ms`,
      load: m.load,
      note:
        `${w.name}, boot image cache ${cache}, median of 3 (SCI start in the worker ${m.bootMs} ms)`,
    });
  }
  if (heavy) {
    reportFigure({ target: "5a", figure: `${mean.toFixed(1)} ms`, load, note: `${w.name}${cpu}` });
  }
}

try {
  await measure(await casePack(), false);
  await measure(clauses(), true);
} finally {
  await Deno.remove(cacheHome, { recursive: true });
}
