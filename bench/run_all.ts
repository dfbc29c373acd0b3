// A bench script: its figures on the console are its output.
// deno-lint-ignore-file no-console
/**
 * Runs every benchmark in bench/ one after another and prints their figures
 * (`deno task bench`). Each runs as its own process with dvergr's permissions.
 * `--memory-100k` makes the memory bench compare 10,000 with 100,000 cells (minutes) instead
 * of 1,000 with 10,000.
 */
import { DVERGR_PERMISSIONS } from "../core/permissions.ts";

// Scripted benchmarks print their own figures (`deno run`); edn_bench uses Deno.bench.
const memoryArgs = Deno.args.includes("--memory-100k") ? ["--large"] : [];
const BENCHES: ["run" | "bench", string, string[]?][] = [
  ["run", "cli_bench.ts"],
  ["run", "checker_bench.ts"],
  ["run", "clojure_bench.ts"],
  ["bench", "edn_bench.ts"],
  ["run", "engine_bench.ts"],
  ["run", "room_store_bench.ts"],
  ["run", "casepack_bench.ts"],
  ["run", "memory_bench.ts", memoryArgs],
  ["run", "concurrency_bench.ts"],
  // Starts a throwaway PostgreSQL cluster; says so and ends when no server is installed.
  ["run", "workers_bench.ts"],
  // Run only when promptfoo is installed (PROMPTFOO_DIR); say how otherwise (the command
  // bench then prints dvergr's times alone).
  ["run", "promptfoo_compare.ts"],
  ["run", "command_bench.ts"],
];

let failed = 0;
for (const [mode, file, args = []] of BENCHES) {
  console.log(`\n== bench/${file}`);
  const path = new URL(file, import.meta.url).pathname;
  const status = await new Deno.Command(Deno.execPath(), {
    args: [mode, ...DVERGR_PERMISSIONS, path, ...args],
    stdout: "inherit",
    stderr: "inherit",
  }).spawn().status;
  if (!status.success) failed++;
}
if (failed > 0) {
  console.error(`${failed} benchmark(s) failed`);
  Deno.exitCode = 1;
}
