// A bench script: its figures on the console are its output.
// deno-lint-ignore-file no-console
/**
 * Runs every benchmark in bench/ one after another and prints their figures
 * (`deno task bench`), then one table of the figures held against the targets
 * (bench/figures.ts: the figure, its peer measured in the same run, their ratio, the goal and
 * the load average), in Markdown for the README's Performance table, and the total wall time.
 * Each runs as its own process with dvergr's permissions.
 *
 * - `--memory-100k` makes the memory bench compare 10,000 with 100,000 cells (minutes)
 *   instead of 1,000 with 10,000.
 * - `--casepack-100k` writes the 100,000-row case pack (the README's figure; tens of minutes on
 *   a busy disk) instead of 10,000 rows.
 * - `--quick` runs only the benches with a target, one round each where a bench alternates
 *   runs (a minute or two instead of several): a look, not figures for the README.
 *
 * The 1,000-case comparison with promptfoo runs twice: on the machine as it is, and beside two
 * CPU burners (`--burners 2`). Both promptfoo comparisons need PROMPTFOO_DIR (see
 * bench/promptfoo_compare.ts); without it they say so and the command bench prints dvergr's
 * times alone.
 */
import { DVERGR_PERMISSIONS } from "../core/permissions.ts";
import { type Figure, figuresIn, figureTable } from "./figures.ts";

const quick = Deno.args.includes("--quick");
const memoryArgs = Deno.args.includes("--memory-100k") ? ["--large"] : [];
const casepackRows = Deno.args.includes("--casepack-100k") ? "100000" : "10000";
const rounds = quick ? ["--runs", "1"] : [];

/** How a bench runs: `deno run` (prints its own figures) or `deno bench`; its args; in --quick. */
type Bench = [mode: "run" | "bench", file: string, args: string[], inQuick: boolean];
const BENCHES: Bench[] = [
  ["run", "startup_bench.ts", quick ? ["3"] : [], true],
  // The floor under a start-up that grades: Deno's start and one Worker's.
  ["run", "worker_floor_bench.ts", quick ? ["3"] : [], true],
  ["run", "checker_bench.ts", [], false],
  ["run", "clojure_bench.ts", quick ? ["50"] : [], true],
  ["bench", "edn_bench.ts", [], false],
  ["run", "engine_bench.ts", [], false],
  ["run", "room_store_bench.ts", [], false],
  ["run", "casepack_bench.ts", ["--rows", casepackRows], false],
  ["run", "memory_bench.ts", memoryArgs, false],
  ["run", "concurrency_bench.ts", [], true],
  // Needs bubblewrap and Claude Code (DVERGR_AGENT_CLIS); says so and ends without them.
  ["run", "agent_overhead_bench.ts", quick ? ["1"] : [], true],
  // Starts a throwaway PostgreSQL cluster; says so and ends when no server is installed.
  ["run", "workers_bench.ts", [], false],
  ["run", "promptfoo_compare.ts", rounds, true],
  ["run", "promptfoo_compare.ts", [...rounds, "--burners", "2"], true],
  ["run", "command_bench.ts", rounds, true],
];

/** Copies a stream to stdout as it comes and returns what it held. */
async function tee(stream: ReadableStream<Uint8Array>): Promise<string> {
  const decoder = new TextDecoder();
  let text = "";
  for await (const chunk of stream) {
    await Deno.stdout.write(chunk);
    text += decoder.decode(chunk, { stream: true });
  }
  return text + decoder.decode();
}

const started = performance.now();
let failed = 0;
const figures: Figure[] = [];
for (const [mode, file, args, inQuick] of BENCHES) {
  if (quick && !inQuick) continue;
  console.log(`\n== bench/${file}${args.length > 0 ? " " + args.join(" ") : ""}`);
  const t0 = performance.now();
  const path = new URL(file, import.meta.url).pathname;
  const child = new Deno.Command(Deno.execPath(), {
    args: [mode, ...DVERGR_PERMISSIONS, path, ...args],
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  const printed = await tee(child.stdout);
  const status = await child.status;
  figures.push(...figuresIn(printed));
  console.log(`(${((performance.now() - t0) / 1000).toFixed(0)} s)`);
  if (!status.success) failed++;
}
console.log(`\n== The targets of issue #26 (measured in this run)\n`);
console.log(figureTable(figures));
console.log(`\nTotal wall time ${((performance.now() - started) / 60_000).toFixed(1)} min`);
if (failed > 0) {
  console.error(`${failed} benchmark(s) failed`);
  Deno.exitCode = 1;
}
