// A bench script: its figures on the console are its output.
// deno-lint-ignore-file no-console
/**
 * Runs every benchmark in bench/ one after another and prints their figures
 * (`deno task bench`). Each runs as its own process with dvergr's permissions.
 */
import { DVERGR_PERMISSIONS } from "../core/permissions.ts";

// Scripted benchmarks print their own figures (`deno run`); edn_bench uses Deno.bench.
const BENCHES: ["run" | "bench", string][] = [
  ["run", "cli_bench.ts"],
  ["run", "checker_bench.ts"],
  ["run", "clojure_bench.ts"],
  ["bench", "edn_bench.ts"],
  ["run", "engine_bench.ts"],
  ["run", "room_store_bench.ts"],
  ["run", "casepack_bench.ts"],
  // Runs only when promptfoo is installed (PROMPTFOO_DIR); says how otherwise.
  ["run", "promptfoo_compare.ts"],
];

let failed = 0;
for (const [mode, file] of BENCHES) {
  console.log(`\n== bench/${file}`);
  const path = new URL(file, import.meta.url).pathname;
  const status = await new Deno.Command(Deno.execPath(), {
    args: [mode, ...DVERGR_PERMISSIONS, path],
    stdout: "inherit",
    stderr: "inherit",
  }).spawn().status;
  if (!status.success) failed++;
}
if (failed > 0) {
  console.error(`${failed} benchmark(s) failed`);
  Deno.exitCode = 1;
}
