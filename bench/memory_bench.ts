// A bench script: its figures on the console are its output.
// deno-lint-ignore-file no-console
/**
 * Peak memory of `dvergr benchmark` as the number of cells grows: the job of
 * bench/promptfoo_compare.ts (N cases, `builtin:reference`, a small JavaScript grader,
 * `--parallel 4`) run with more and more repetitions on a fresh home each time, measured
 * with GNU time's %M (the peak resident set of the largest process: dvergr's own). Records
 * are streamed, not held, so the peak must stay about the same from 10,000 to 100,000
 * cells; the script prints each figure and the ratio of the largest run's to the smallest's.
 *
 *   deno run <dvergr permissions> bench/memory_bench.ts [--cases 1000] [--reps 1,10] [--large]
 *
 * `--large` runs 1,000 cases × 10 and × 100 repetitions (10,000 vs 100,000 cells; the
 * second takes several minutes). Without GNU time (/usr/bin/time) it says so and exits 0.
 */
import { join } from "node:path";
import { parseArgs } from "node:util";
import { sideBySideBenchmarkArgv, writeSideBySideBundle } from "./side_by_side_bundle.ts";

const { values } = parseArgs({
  args: Deno.args,
  options: {
    cases: { type: "string", default: "1000" },
    reps: { type: "string", default: "1,10" },
    large: { type: "boolean" },
    parallel: { type: "string", default: "4" },
  },
});
const cases = Number(values.cases);
const reps = (values.large ? "10,100" : values.reps).split(",").map(Number);

const gnuTime = "/usr/bin/time";
try {
  await Deno.stat(gnuTime);
} catch {
  console.log("memory bench skipped: GNU time (/usr/bin/time) is not installed");
  Deno.exit(0);
}

const dir = await Deno.makeTempDir({ prefix: "dvergr-memory-bench-" });
const bundle = join(dir, "bundle");
await writeSideBySideBundle(bundle, cases);

// /proc is outside dvergr's permissions; `cat` may read it.
const load = async () =>
  new TextDecoder().decode(
    (await new Deno.Command("cat", { args: ["/proc/loadavg"], stdout: "piped" }).output()).stdout,
  ).split(" ")[0];
console.log(
  `memory bench: ${cases} cases, builtin:reference, --parallel ${values.parallel}, load average ${await load()}`,
);
const peaks: number[] = [];
for (const r of reps) {
  const home = join(dir, `home-${r}`);
  const t0 = performance.now();
  const out = await new Deno.Command(gnuTime, {
    args: [
      "-f",
      "%M",
      ...sideBySideBenchmarkArgv(bundle, home, { parallel: values.parallel, repetitions: r }),
    ],
    cwd: dir,
    env: { NO_COLOR: "1" },
    stdout: "piped",
    stderr: "piped",
  }).output();
  const s = (performance.now() - t0) / 1000;
  const err = new TextDecoder().decode(out.stderr).trim().split("\n");
  if (!out.success) throw new Error(`dvergr benchmark failed:\n${err.slice(-30).join("\n")}`);
  const mib = Number(err.at(-1)) / 1024;
  peaks.push(mib);
  console.log(
    `${String(cases * r).padStart(7)} cells (${r} repetitions): peak RSS ${mib.toFixed(1)} MiB, ${
      s.toFixed(1)
    } s, load average ${await load()}`,
  );
  await Deno.remove(home, { recursive: true });
}
if (peaks.length > 1) {
  console.log(
    `peak at ${cases * reps.at(-1)!} cells ÷ peak at ${cases * reps[0]} cells = ${
      (peaks.at(-1)! / peaks[0]).toFixed(2)
    }`,
  );
}
await Deno.remove(dir, { recursive: true });
