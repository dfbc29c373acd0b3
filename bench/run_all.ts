/**
 * Runs every benchmark in bench/ one after another and prints their figures
 * (`deno task bench`). Each runs as its own process with dvergr's permissions.
 */
import { DVERGR_PERMISSIONS } from "../core/permissions.ts";

const BENCHES: [string, string[]][] = [
  ["cli_bench.ts", []],
  ["checker_bench.ts", []],
  ["edn_bench.ts", []],
  ["engine_bench.ts", []],
  ["casepack_bench.ts", []],
];

let failed = 0;
for (const [file, args] of BENCHES) {
  console.log(`\n== bench/${file}`);
  const path = new URL(file, import.meta.url).pathname;
  const status = await new Deno.Command(Deno.execPath(), {
    args: ["run", ...DVERGR_PERMISSIONS, path, ...args],
    stdout: "inherit",
    stderr: "inherit",
  }).spawn().status;
  if (!status.success) failed++;
}
if (failed > 0) {
  console.error(`${failed} benchmark(s) failed`);
  Deno.exitCode = 1;
}
