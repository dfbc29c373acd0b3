// A bench script: its figures on the console are its output.
// deno-lint-ignore-file no-console
/**
 * Start-up: wall time of whole CLI invocations, as a user runs them. `deno run` of an empty
 * module with dvergr's deno.json and flags (Deno's own start, the floor under every command),
 * `dvergr --help` (the peer: start-up with lazy imports), `dvergr check` on the dataset example (read, shape
 * check, content id, the checker's load: kept from an earlier check; not kept in a home that
 * has run dvergr before, as for the first check of a bundle: its checker's kept load and
 * checker images removed, the QuickJS boot image and layout kept; and the first run of dvergr
 * in a home, which also makes that boot image), `dvergr check --answer` (one verdict) and
 * `dvergr calibrate` (the reference and four damaged answers graded). The commands alternate, N rounds (default 10); prints
 * each median with its ratio to --help's and the load average before and after:
 * `deno run <dvergr permissions> bench/startup_bench.ts [runs]`.
 */
import { DVERGR_RUN_FLAGS } from "../core/permissions.ts";
import { join } from "node:path";
import { reportFigure } from "./figures.ts";

const RUNS = Number(Deno.args[0] ?? 10);
const MAIN = new URL("../main.ts", import.meta.url).pathname;
const EXAMPLE = new URL("../examples/workflows/invoice-fields", import.meta.url).pathname;

/** Deno's cache, named, so that a fresh HOME does not move it. */
const denoDir = JSON.parse(
  new TextDecoder().decode(
    (await new Deno.Command(Deno.execPath(), { args: ["info", "--json"], stdout: "piped" })
      .output()).stdout,
  ),
).denoDir as string;

/** An empty module in the repository: `deno run` of it reads deno.json as dvergr's start does. */
const EMPTY = new URL("../.startup_bench_empty.ts", import.meta.url).pathname;

async function wallMs(
  args: string[],
  env: Record<string, string> = {},
  main = MAIN,
): Promise<number> {
  const t0 = performance.now();
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", ...DVERGR_RUN_FLAGS, main, ...args],
    env,
    stdout: "null",
    stderr: "piped",
  }).output();
  const ms = performance.now() - t0;
  if (!out.success) {
    throw new Error(`dvergr ${args.join(" ")} failed: ${new TextDecoder().decode(out.stderr)}`);
  }
  return ms;
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

/** A HOME of its own (nothing kept: no boot image, no checker loads), Deno's cache where it was. */
async function freshHome(): Promise<Record<string, string>> {
  return { HOME: await Deno.makeTempDir(), DENO_DIR: denoDir, XDG_CACHE_HOME: "" };
}

/**
 * A HOME that has run dvergr (its boot image, layout and sandbox digest kept), made once and
 * warmed by the first round's warm-up; before each run its checkers' kept loads and images
 * are removed, so the example's checker is new to it, as a bundle's is on its first check.
 */
const usedHome = await freshHome();

/** The environment of a run: a fresh HOME, the used one made new to the checker, or ours. */
async function homeFor(kind: Home): Promise<Record<string, string>> {
  if (kind === "fresh") return await freshHome();
  if (kind === "kept") return {};
  const cache = join(usedHome.HOME, ".cache", "dvergr");
  await Deno.remove(join(cache, "checker-loads"), { recursive: true }).catch(() => {});
  try {
    for (const e of Deno.readDirSync(join(cache, "sandbox-images"))) {
      if (e.name.endsWith(".ckimg")) await Deno.remove(join(cache, "sandbox-images", e.name));
    }
  } catch {
    // None made yet (the warm-up makes them).
  }
  return usedHome;
}

/** An answer directory holding the example's reference answer (`check --answer`). */
const answer = await Deno.makeTempDir();
await Deno.mkdir(join(answer, "out"));
await Deno.writeTextFile(
  join(answer, "out", "answer.edn"),
  '{"vendor" "Nordlicht Bürobedarf GmbH" "invoice-no" "NB-2025-0412" "date" "2025-03-14" ' +
    '"currency" "EUR" "total" "272,27"}',
);

/** Where a run's HOME is: ours ("kept"), one that has run dvergr ("used"), a new one ("fresh"). */
type Home = "kept" | "used" | "fresh";

const COMMANDS: [string, string[], Home][] = [
  ["dvergr --help", ["--help"], "kept"],
  ["deno run of an empty module (Deno's own start)", [], "kept"],
  ["dvergr check examples/workflows/invoice-fields (load kept)", ["check", EXAMPLE], "kept"],
  [
    "dvergr check examples/workflows/invoice-fields (load not kept: first check of a bundle)",
    ["check", EXAMPLE],
    "used",
  ],
  [
    "dvergr check examples/workflows/invoice-fields (first run of dvergr in a home)",
    ["check", EXAMPLE],
    "fresh",
  ],
  ["dvergr check … --answer DIR (one verdict)", ["check", EXAMPLE, "--answer", answer], "kept"],
  ["dvergr calibrate examples/workflows/invoice-fields", ["calibrate", EXAMPLE], "kept"],
];
const times: number[][] = COMMANDS.map(() => []);
const loads: string[] = [await load()];
/** The module row `k` runs: the empty one for the floor, else main.ts. */
const mainOf = (k: number) => k === 1 ? EMPTY : MAIN;
await Deno.writeTextFile(EMPTY, "export {};\n");
try {
  // Warm the module cache (and keep the load; the used home makes its boot image).
  for (const [k, [, args, home]] of COMMANDS.entries()) {
    await wallMs(args, home === "used" ? usedHome : {}, mainOf(k));
  }
  for (let i = 0; i < RUNS; i++) {
    for (const [k, [, args, home]] of COMMANDS.entries()) {
      const env = await homeFor(home);
      times[k].push(await wallMs(args, env, mainOf(k)));
      if (home === "fresh") await Deno.remove(env.HOME, { recursive: true });
    }
  }
} finally {
  await Deno.remove(answer, { recursive: true });
  await Deno.remove(EMPTY);
  await Deno.remove(usedHome.HOME, { recursive: true });
}
loads.push(await load());
const help = median(times[0]);
const floor = median(times[1]);
for (const [k, [label]] of COMMANDS.entries()) {
  const m = median(times[k]);
  console.log(
    `${label}: median ${m.toFixed(0)} ms, min ${Math.min(...times[k]).toFixed(0)} ms` +
      (k === 0 ? "" : `, ${(m / help).toFixed(2)}× --help`),
  );
}
console.log(`${RUNS} alternating rounds, load average ${loads.join(" → ")}`);
// check with its checker's load kept, not kept (the first check of a bundle; the first run of
// dvergr in a home), check with one answer graded, and calibrate.
for (const [target, k] of [["3a", 2], ["3a", 3], ["3a", 4], ["3a", 5], ["3b", 6]] as const) {
  const m = median(times[k]);
  reportFigure({
    target,
    figure: `${m.toFixed(0)} ms`,
    peer: `--help ${help.toFixed(0)} ms`,
    ratio: m / help,
    load: loads.join(" → "),
    // --help is now close to Deno's own start: the figure against that floor too.
    note: `${COMMANDS[k][0].replace(/^dvergr /, "")}, median of ${RUNS}; ` +
      `${(m / floor).toFixed(2)}× Deno's own start (${floor.toFixed(0)} ms)`,
  });
}
