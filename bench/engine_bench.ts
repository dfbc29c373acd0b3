// A bench script: its figures on the console are its output.
// deno-lint-ignore-file no-console
/**
 * The benchmark engine's own overhead: 1,000 cells of `builtin:reference` (no agent time)
 * at --parallel 4 through the same path as `dvergr benchmark` — a real home (git room,
 * Deno KV, blobs on disk), a fresh world per cell, capture, the QuickJS checker, the
 * evidence blob and the atomic record. Then the time to resume the finished run (every
 * cell kept), and a command candidate's cost per cell for comparison.
 *
 * Run (or `deno task bench`): deno run <dvergr permissions, see deno.json> bench/engine_bench.ts [--cells 1000] [--parallel 4] [--keep]
 */
import { parseArgs } from "node:util";
import { openHome } from "../adapters/store/kv/home.ts";
import { benchmarkBundle } from "../core/engine/benchmark.ts";
import { createCheckerPool } from "../sandbox/checker_pool.ts";
import type { FileMap } from "../core/bundle/file_map.ts";
import { composeServices } from "../adapters/compose.ts";

const { values } = parseArgs({
  args: Deno.args,
  options: {
    cells: { type: "string", default: "1000" },
    parallel: { type: "string", default: "4" },
    keep: { type: "boolean" },
  },
});
const cells = Number(values.cells);
const parallel = Number(values.parallel);
const repetitions = 10;
const cases = Math.max(1, Math.round(cells / repetitions));

/** A dataset of `n` cases: each asks for its own word; the checker compares. */
function dataset(n: number): FileMap {
  const files: FileMap = new Map([
    [
      "workflow.edn",
      '{:title "Engine bench" :task "Write the word in /docs/q.txt to /out/answer.txt."}',
    ],
    [
      "checker.js",
      `export function check({ files, gold }) {
  const text = (files["/out/answer.txt"] ?? "").trim();
  return { checks: { answered: text.length > 0, right: text === gold.word }, reward: text === gold.word ? 1 : 0 };
}`,
    ],
    ["fixtures/docs/readme.md", "One word per case."],
    [
      "calibration.edn",
      '{:case "c0001" :reference {"/out/answer.txt" "w1"} :damaged {:wrong {:files {"/out/answer.txt" "x"} :loses [:right]}}}',
    ],
  ]);
  for (let i = 1; i <= n; i++) {
    const id = `c${String(i).padStart(4, "0")}`;
    files.set(`cases/${id}/fixtures/docs/q.txt`, `w${i}`);
    files.set(`cases/${id}/gold.edn`, `{:word "w${i}"}`);
  }
  return files;
}

const dir = await Deno.makeTempDir({ prefix: "dvergr-engine-bench-" });
const home = await openHome(dir);
const pool = createCheckerPool({ workers: 2 });
const bundle = { name: "engine-bench", files: dataset(cases) };
const env = (k: string) => Deno.env.get(k);

async function timed(
  label: string,
  specs: Parameters<typeof benchmarkBundle>[0]["specs"],
  reps = repetitions,
) {
  const t0 = performance.now();
  const outcome = await benchmarkBundle({
    services: composeServices(),
    bundle,
    specs,
    home,
    runner: pool,
    env,
    repetitions: reps,
    parallel,
  });
  const ms = performance.now() - t0;
  const r = outcome.result;
  console.log(
    `${label.padEnd(34)} ${String(r.total).padStart(5)} cells  ran ${
      String(r.attempts).padStart(5)
    }  ` +
      `kept ${String(r.kept).padStart(5)}  ${(ms / 1000).toFixed(2).padStart(6)} s  ` +
      `${(ms / r.total).toFixed(2).padStart(6)} ms/cell`,
  );
  if (!r.complete) throw new Error(`${label}: the run did not complete`);
  return ms;
}

console.log(
  `engine bench: ${cases} cases × ${repetitions} repetitions, --parallel ${parallel}, home ${dir}`,
);
await timed("fresh run, builtin:reference", [{
  kind: "builtin",
  builtin: "reference",
  name: "builtin:reference",
}]);
await timed("resume, every cell done", [{
  kind: "builtin",
  builtin: "reference",
  name: "builtin:reference",
}]);
await timed("fresh run, cmd:cat (1 repetition)", [{
  kind: "command",
  name: "cat",
  command: "cat docs/q.txt > out/answer.txt",
}], 1);

pool.close();
await home.close();
if (!values.keep) await Deno.remove(dir, { recursive: true });
