// A bench script: its figures on the console are its output.
// deno-lint-ignore-file no-console
/**
 * The floor under any start-up that grades something (`dvergr check --answer`, `calibrate`, a
 * first `check`): checker code runs in a permission-less Worker, and Deno blocks the thread
 * that makes a Worker until the worker's isolate exists. This prints, as whole processes
 * with dvergr's deno.json and flags, alternating N rounds (default 10):
 *
 * - Deno's own start: `deno run` of an empty module;
 * - the same plus one permission-less Worker of an empty module, until its first message;
 * - how long `new Worker()` itself held the main thread (inside that process);
 * - `dvergr --help`, the peer of issue #26's start-up target, and the floor's ratio to it.
 *
 * A command that grades cannot start faster than the second line, before it loads a module
 * of its own, QuickJS, or the checker: `deno run <dvergr permissions> bench/worker_floor_bench.ts [runs]`.
 */
import { DVERGR_RUN_FLAGS } from "../core/permissions.ts";

const RUNS = Number(Deno.args[0] ?? 10);
const MAIN = new URL("../main.ts", import.meta.url).pathname;
/** Modules in the repository, so that `deno run` reads deno.json as dvergr's start does. */
const EMPTY = new URL("../.worker_floor_empty.ts", import.meta.url).pathname;
const WORKER = new URL("../.worker_floor_worker.ts", import.meta.url).pathname;
const WITH_WORKER = new URL("../.worker_floor_main.ts", import.meta.url).pathname;

/** Wall time of one process, and what it printed. */
async function run(args: string[]): Promise<{ ms: number; out: string }> {
  const t0 = performance.now();
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", ...DVERGR_RUN_FLAGS, ...args],
    stdout: "piped",
    stderr: "piped",
  }).output();
  const ms = performance.now() - t0;
  if (!out.success) {
    throw new Error(`deno run ${args.join(" ")} failed: ${new TextDecoder().decode(out.stderr)}`);
  }
  return { ms, out: new TextDecoder().decode(out.stdout) };
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor((s.length - 1) / 2)];
}

async function load(): Promise<string> {
  // Deno lets only --allow-all read /proc; cat may.
  const out = await new Deno.Command("cat", { args: ["/proc/loadavg"], stdout: "piped" }).output();
  return new TextDecoder().decode(out.stdout).split(" ")[0];
}

await Deno.writeTextFile(EMPTY, "export {};\n");
await Deno.writeTextFile(WORKER, "postMessage(0);\n");
// As sandbox/early_thread.ts makes a checker's worker: a module, no permission at all.
await Deno.writeTextFile(
  WITH_WORKER,
  `const t0 = performance.now();
const w = new Worker(new URL("./.worker_floor_worker.ts", import.meta.url), {
  type: "module",
  deno: { permissions: "none" },
});
const held = performance.now() - t0;
w.onmessage = () => {
  console.log(held.toFixed(2));
  w.terminate();
};
`,
);
const rows = {
  empty: [] as number[],
  worker: [] as number[],
  held: [] as number[],
  help: [] as number[],
};
const loads = [await load()];
try {
  // Warm Deno's caches.
  await run([EMPTY]);
  await run([WITH_WORKER]);
  await run([MAIN, "--help"]);
  for (let i = 0; i < RUNS; i++) {
    rows.empty.push((await run([EMPTY])).ms);
    const w = await run([WITH_WORKER]);
    rows.worker.push(w.ms);
    rows.held.push(Number(w.out.trim()));
    rows.help.push((await run([MAIN, "--help"])).ms);
  }
} finally {
  for (const f of [EMPTY, WORKER, WITH_WORKER]) await Deno.remove(f).catch(() => {});
}
loads.push(await load());
const help = median(rows.help);
const line = (label: string, xs: number[]) =>
  console.log(
    `${label}: median ${median(xs).toFixed(1)} ms, min ${Math.min(...xs).toFixed(1)} ms` +
      `, ${(median(xs) / help).toFixed(2)}× --help`,
  );
line("Deno's own start (an empty module)", rows.empty);
line(
  "an empty module that makes one permission-less Worker (until its first message)",
  rows.worker,
);
line("of which new Worker() held the main thread", rows.held);
line("dvergr --help", rows.help);
console.log(`${RUNS} alternating rounds, load average ${loads.join(" → ")}`);
