// A bench script: its figures on the console are its output.
// deno-lint-ignore-file no-console
/**
 * Wall time of whole CLI invocations, as a user runs them: `dvergr --help` (start-up
 * with lazy imports) and `dvergr check` on the dataset example (read, shape check,
 * content id). Median of N runs each (default 10):
 * `deno run <dvergr permissions> bench/cli_bench.ts [runs]`.
 */
import { DVERGR_RUN_FLAGS } from "../core/permissions.ts";

const RUNS = Number(Deno.args[0] ?? 10);
const MAIN = new URL("../main.ts", import.meta.url).pathname;
const EXAMPLE = new URL("../examples/workflows/invoice-fields", import.meta.url).pathname;

async function wallMs(args: string[]): Promise<number> {
  const t0 = performance.now();
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", ...DVERGR_RUN_FLAGS, MAIN, ...args],
    stdout: "null",
    stderr: "piped",
  }).output();
  const ms = performance.now() - t0;
  if (!out.success && args[0] !== "--help") {
    throw new Error(`dvergr ${args.join(" ")} failed: ${new TextDecoder().decode(out.stderr)}`);
  }
  return ms;
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor((s.length - 1) / 2)];
}

for (
  const [label, args] of [
    ["dvergr --help", ["--help"]],
    ["dvergr check examples/workflows/invoice-fields", ["check", EXAMPLE]],
    ["dvergr calibrate examples/workflows/invoice-fields", ["calibrate", EXAMPLE]],
  ] as const
) {
  await wallMs([...args]); // warm the module cache
  const times: number[] = [];
  for (let i = 0; i < RUNS; i++) times.push(await wallMs([...args]));
  console.log(
    `${label}: median ${median(times).toFixed(0)} ms, min ${
      Math.min(...times).toFixed(0)
    } ms over ${RUNS} runs`,
  );
}
