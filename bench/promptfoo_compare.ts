// A bench script: its figures on the console are its output.
// deno-lint-ignore-file no-console
/**
 * The same job in dvergr and in promptfoo, side by side on this machine: N cases (default
 * 1,000), an instant candidate, a small JavaScript grader, 4 at a time. dvergr runs
 * `dvergr benchmark BUNDLE --candidate builtin:reference --parallel 4` on a fresh home (a
 * world per cell, the sandboxed checker, crash-safe records); promptfoo runs
 * `promptfoo eval -j 4 --no-cache --no-write` with its `echo` provider and a `javascript`
 * assertion. Runs alternate (default 3 each); prints each time, the medians, their ratio
 * (dvergr / promptfoo) and each tool's peak resident memory (GNU time's %M, the largest
 * process of the run).
 *
 * promptfoo is not a dependency of dvergr: install it in a scratch directory outside the
 * repository (`npm install promptfoo@0.123.1`) and pass that directory:
 *
 *   deno run <dvergr permissions> bench/promptfoo_compare.ts \
 *     --promptfoo /path/to/scratch [--cases 1000] [--runs 3]
 *
 * (or set PROMPTFOO_DIR). It runs `node <dir>/node_modules/promptfoo/dist/src/main.js`: the
 * package's `promptfoo` binary refuses Node.js before 22.22, and this machine has Node.js 20,
 * on which main.js itself runs the job. Without it the script says how to get it and exits 0.
 *
 * `--burners N` runs the comparison beside N CPU burners (`sh -c 'while :; do :; done'`,
 * started before the first run and stopped after the last), as issue #26 measures it on a
 * loaded machine. Prints the load average beside each run, and a FIGURE line for
 * bench/run_all.ts (bench/figures.ts).
 */
import { join } from "node:path";
import { parseArgs } from "node:util";
import {
  promptfooEvalArgv,
  promptfooMainIn,
  sideBySideBenchmarkArgv,
  writeSideBySideBundle,
} from "./side_by_side_bundle.ts";
import { loadAverage, reportFigure } from "./figures.ts";

const { values } = parseArgs({
  args: Deno.args,
  options: {
    promptfoo: { type: "string" },
    cases: { type: "string", default: "1000" },
    runs: { type: "string", default: "3" },
    parallel: { type: "string", default: "4" },
    burners: { type: "string", default: "0" },
  },
});
const scratch = values.promptfoo ?? Deno.env.get("PROMPTFOO_DIR");
const promptfooMain = promptfooMainIn(scratch);
const cases = Number(values.cases);
const runs = Number(values.runs);
const parallel = values.parallel;
const burners = Number(values.burners);

if (!scratch || !(await isFile(promptfooMain))) {
  console.log(
    "promptfoo comparison skipped: promptfoo is not installed. Install it outside the " +
      "repository (mkdir /tmp/pf && cd /tmp/pf && npm install promptfoo@0.123.1) and run " +
      "again with --promptfoo /tmp/pf (or PROMPTFOO_DIR=/tmp/pf).",
  );
  Deno.exit(0);
}

async function isFile(path: string): Promise<boolean> {
  try {
    return (await Deno.stat(path)).isFile;
  } catch {
    return false;
  }
}

const dir = await Deno.makeTempDir({ prefix: "dvergr-vs-promptfoo-" });
const words = Array.from({ length: cases }, (_, i) => `w${i + 1}`);

// dvergr: a dataset bundle, one case per word; the reference answer is the first case's.
const bundle = join(dir, "bundle");
await writeSideBySideBundle(bundle, cases);

// promptfoo: the echo provider answers with the prompt; a JavaScript assertion grades it.
const config = join(dir, "promptfooconfig.yaml");
// A PATH for node (the command runs with a small environment of its own).
const path = Deno.env.get("PATH") ?? "/usr/local/bin:/usr/bin:/bin";
await Deno.writeTextFile(join(dir, "tests.csv"), "word\n" + words.join("\n") + "\n");
await Deno.writeTextFile(
  config,
  `prompts:
  - "{{word}}"
providers:
  - echo
defaultTest:
  assert:
    - type: javascript
      value: "String(output).trim() === context.vars.word"
tests: file://tests.csv
`,
);

const gnuTime = await isFile("/usr/bin/time") ? "/usr/bin/time" : null;

/** Runs a command, returns its wall time in ms and its peak RSS in KiB (when measurable). */
async function timed(
  cmd: string[],
  env: Record<string, string>,
  cwd: string,
  finished: (printed: string) => boolean = () => true,
) {
  const full = gnuTime ? [gnuTime, "-f", "%M", ...cmd] : cmd;
  const t0 = performance.now();
  const out = await new Deno.Command(full[0], {
    args: full.slice(1),
    cwd,
    env,
    stdout: "piped",
    stderr: "piped",
  }).output();
  const ms = performance.now() - t0;
  const err = new TextDecoder().decode(out.stderr).trim().split("\n");
  const printed = new TextDecoder().decode(out.stdout) + "\n" + err.join("\n");
  if (!out.success && !finished(printed)) {
    throw new Error(`${cmd.join(" ")} failed:\n${err.slice(-40).join("\n")}`);
  }
  const rss = gnuTime ? Number(err.at(-1)) : NaN;
  return { ms, rssKiB: rss };
}

/** CPU burners beside the runs, each stopped by its own pid at the end. */
function startBurners(n: number): Deno.ChildProcess[] {
  return Array.from({ length: n }, () =>
    new Deno.Command("sh", {
      args: ["-c", "while :; do :; done"],
      stdin: "null",
      stdout: "null",
      stderr: "null",
    }).spawn());
}

async function stopBurners(children: Deno.ChildProcess[]): Promise<void> {
  for (const c of children) {
    try {
      c.kill("SIGKILL");
    } catch {
      // It has ended already.
    }
    await c.status;
  }
}

const burning = startBurners(burners);
// The burners' load shows in the load average only after a while; a run starts at once.
const loads = [await loadAverage()];
const dvergrTimes: number[] = [];
const promptfooTimes: number[] = [];
let dvergrRss = 0;
let promptfooRss = 0;
const quiet = { PROMPTFOO_DISABLE_TELEMETRY: "1", PROMPTFOO_DISABLE_UPDATE: "1", NO_COLOR: "1" };
try {
  for (let r = 0; r < runs; r++) {
    const home = join(dir, `home-${r}`);
    const d = await timed(
      sideBySideBenchmarkArgv(bundle, home, { parallel }),
      { NO_COLOR: "1" },
      dir,
    );
    dvergrTimes.push(d.ms);
    dvergrRss = Math.max(dvergrRss, d.rssKiB || 0);
    // promptfoo logs under $HOME/.promptfoo: a home of its own per run, made first.
    await Deno.mkdir(join(dir, `pf-home-${r}`));
    const p = await timed(
      promptfooEvalArgv(promptfooMain, config, parallel),
      { ...quiet, PATH: path, HOME: join(dir, `pf-home-${r}`) },
      dir,
      // On Node.js 20 promptfoo often fails on its way out ("write after end" in its file
      // logger) after "Eval complete": the job itself finished.
      (printed) => /Eval complete/.test(printed),
    );
    promptfooTimes.push(p.ms);
    promptfooRss = Math.max(promptfooRss, p.rssKiB || 0);
    loads.push(await loadAverage());
    const seconds = (ms: number) => (ms / 1000).toFixed(2);
    console.log(
      `run ${r + 1}: dvergr ${seconds(d.ms)} s, promptfoo ${seconds(p.ms)} s ` +
        `(load average ${loads.at(-1)})`,
    );
  }
} finally {
  await stopBurners(burning);
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const dm = median(dvergrTimes);
const pm = median(promptfooTimes);
console.log(
  `${cases} cases, instant candidate, JavaScript grader, ${parallel} at a time (median of ${runs})` +
    `${burners > 0 ? `, beside ${burners} CPU burners` : ""}:`,
);
console.log(
  `  dvergr    ${(dm / 1000).toFixed(2)} s${
    gnuTime ? `, peak RSS ${Math.round(dvergrRss / 1024)} MiB` : ""
  }`,
);
console.log(
  `  promptfoo ${(pm / 1000).toFixed(2)} s${
    gnuTime ? `, peak RSS ${Math.round(promptfooRss / 1024)} MiB` : ""
  }`,
);
console.log(`  ratio dvergr / promptfoo = ${(dm / pm).toFixed(2)}`);
console.log(`  load average ${loads.join(" → ")}`);
reportFigure({
  target: burners > 0 ? "4-burners" : "4-quiet",
  figure: `dvergr ${(dm / 1000).toFixed(2)} s`,
  peer: `promptfoo ${(pm / 1000).toFixed(2)} s`,
  ratio: dm / pm,
  load: `${loads[0]} → ${loads.at(-1)}`,
  note: `median of ${runs}, ${cases} cases${burners > 0 ? `, ${burners} burners` : ""}`,
});
await Deno.remove(dir, { recursive: true });
