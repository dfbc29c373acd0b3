// A bench script: its figures on the console are its output.
// deno-lint-ignore-file no-console
/**
 * Command attempts side by side with promptfoo's `exec:` provider: N cases (default 200), a
 * shell-script agent that reads the case's file and answers, a small JavaScript grader, 4 at
 * a time. dvergr runs `dvergr benchmark BUNDLE --candidate 'agent=cmd:sh AGENT' --parallel 4`
 * on a fresh home: each attempt sandboxed (bubblewrap, when it can build its sandbox) in a
 * fresh world, the agent reading /docs/case.txt and writing /out/answer.edn, graded by the
 * bundle's checker, recorded crash-safe. promptfoo runs `promptfoo eval -j 4 --no-cache
 * --no-write` with `exec: sh AGENT` (the agent reads the case's file named in the prompt and
 * prints the same answer) and a `javascript` assertion, unsandboxed. Runs alternate (default
 * 3 each, dvergr first); prints each time with the load average, the medians and their
 * ratio (dvergr / promptfoo), and a FIGURE line for bench/run_all.ts (bench/figures.ts).
 *
 *   deno run <dvergr permissions> bench/command_bench.ts \
 *     --promptfoo /path/to/scratch [--cases 200] [--runs 3] [--parallel 4] [--isolation none]
 *
 * promptfoo is installed as for bench/promptfoo_compare.ts (`npm install promptfoo@0.123.1`
 * in a scratch directory outside the repository, or PROMPTFOO_DIR). Without it only dvergr's
 * times are printed.
 */
import { join } from "node:path";
import { parseArgs } from "node:util";
import { DVERGR_RUN_FLAGS } from "../core/permissions.ts";
import { loadAverage as load, reportFigure } from "./figures.ts";
import { promptfooEvalArgv, promptfooMainIn } from "./side_by_side_bundle.ts";

const { values } = parseArgs({
  args: Deno.args,
  options: {
    promptfoo: { type: "string" },
    cases: { type: "string", default: "200" },
    runs: { type: "string", default: "3" },
    parallel: { type: "string", default: "4" },
    isolation: { type: "string" },
  },
});
const scratch = values.promptfoo ?? Deno.env.get("PROMPTFOO_DIR");
const promptfooMain = promptfooMainIn(scratch);
const cases = Number(values.cases);
const runs = Number(values.runs);
const parallel = values.parallel;

async function isFile(path: string): Promise<boolean> {
  try {
    return (await Deno.stat(path)).isFile;
  } catch {
    return false;
  }
}
const havePromptfoo = scratch !== undefined && await isFile(promptfooMain);
if (!havePromptfoo) {
  console.log(
    "promptfoo is not installed: only dvergr's times are printed. Install it outside the " +
      "repository (mkdir /tmp/pf && cd /tmp/pf && npm install promptfoo@0.123.1) and run " +
      "again with --promptfoo /tmp/pf (or PROMPTFOO_DIR=/tmp/pf).",
  );
}

const dir = await Deno.makeTempDir({ prefix: "dvergr-command-bench-" });
const write = async (rel: string, text: string) => {
  await Deno.mkdir(join(dir, rel, ".."), { recursive: true });
  await Deno.writeTextFile(join(dir, rel), text);
};

// The agents: dvergr's reads /docs/case.txt and writes /out/answer.edn; promptfoo's reads
// the file its prompt names and prints the same EDN.
const agents = join(dir, "agents");
await write(
  "agents/agent.sh",
  'w=$(cat /docs/case.txt)\nprintf \'{:word "%s"}\\n\' "$w" > /out/answer.edn\n',
);
await write("agents/pf_agent.sh", 'w=$(cat "$1")\nprintf \'{:word "%s"}\\n\' "$w"\n');

// dvergr's bundle: one case per word, a JavaScript checker of the answer's word.
await write(
  "bundle/workflow.edn",
  '{:title "Command bench" :task "Read /docs/case.txt and write {:word WORD} to /out/answer.edn."}',
);
await write(
  "bundle/checker.js",
  `export function check({ files, gold }) {
  const m = /:word "([^"]*)"/.exec(files["/out/answer.edn"] ?? "");
  const right = m !== null && m[1] === gold.word;
  return { checks: { right }, reward: right ? 1 : 0 };
}`,
);
await write(
  "bundle/calibration.edn",
  '{:case "c0001" :reference {"/out/answer.edn" "{:word \\"w1\\"}"} :damaged {:wrong {:files {"/out/answer.edn" "{:word \\"x\\"}"} :loses [:right]}}}',
);
const rows: string[] = [];
for (let i = 1; i <= cases; i++) {
  const id = `c${String(i).padStart(4, "0")}`;
  await write(`bundle/cases/${id}/fixtures/docs/case.txt`, `w${i}`);
  await write(`bundle/cases/${id}/gold.edn`, `{:word "w${i}"}`);
  rows.push(`${join(dir, "bundle/cases", id, "fixtures/docs/case.txt")},w${i}`);
}

// promptfoo: the exec provider runs the agent with the prompt (the case file's path).
const config = join(dir, "promptfooconfig.yaml");
await Deno.writeTextFile(join(dir, "tests.csv"), "file,word\n" + rows.join("\n") + "\n");
await Deno.writeTextFile(
  config,
  `prompts:
  - "{{file}}"
providers:
  - "exec: sh ${join(agents, "pf_agent.sh")}"
defaultTest:
  assert:
    - type: javascript
      value: "const m = /:word \\"([^\\"]*)\\"/.exec(String(output)); return m !== null && m[1] === context.vars.word"
tests: file://tests.csv
`,
);

const path = Deno.env.get("PATH") ?? "/usr/local/bin:/usr/bin:/bin";

/** Runs a command; its wall time in ms and what it printed. */
async function timed(
  cmd: string[],
  env: Record<string, string>,
  finished: (printed: string) => boolean,
): Promise<number> {
  const t0 = performance.now();
  const out = await new Deno.Command(cmd[0], {
    args: cmd.slice(1),
    cwd: dir,
    env,
    stdout: "piped",
    stderr: "piped",
  }).output();
  const ms = performance.now() - t0;
  const printed = new TextDecoder().decode(out.stdout) + "\n" +
    new TextDecoder().decode(out.stderr);
  if (!finished(printed)) {
    throw new Error(`${cmd.join(" ")} did not finish the job:\n${printed.slice(-3000)}`);
  }
  return ms;
}

const dvergrTimes: number[] = [];
const promptfooTimes: number[] = [];
const quiet = { PROMPTFOO_DISABLE_TELEMETRY: "1", PROMPTFOO_DISABLE_UPDATE: "1", NO_COLOR: "1" };
const firstLoad = await load();
for (let r = 0; r < runs; r++) {
  const loadBefore = await load();
  const d = await timed(
    [
      Deno.execPath(),
      "run",
      ...DVERGR_RUN_FLAGS,
      new URL("../main.ts", import.meta.url).pathname,
      "benchmark",
      join(dir, "bundle"),
      "--candidate",
      `agent=cmd:sh ${join(agents, "agent.sh")}`,
      "--mount",
      agents,
      "--parallel",
      parallel,
      "--home",
      join(dir, `home-${r}`),
      "--json",
    ],
    {
      NO_COLOR: "1",
      PATH: path,
      ...(values.isolation ? { DVERGR_ISOLATION: values.isolation } : {}),
    },
    // Every cell passed: the job was done, not merely ended.
    (printed) => /"passRate":1[,}]/.test(printed.replace(/\s+/g, "")),
  );
  dvergrTimes.push(d);
  let line = `run ${r + 1}: dvergr ${(d / 1000).toFixed(2)} s (load ${loadBefore})`;
  if (havePromptfoo) {
    const loadPf = await load();
    await Deno.mkdir(join(dir, `pf-home-${r}`));
    const p = await timed(
      promptfooEvalArgv(promptfooMain, config, parallel),
      { ...quiet, PATH: path, HOME: join(dir, `pf-home-${r}`) },
      // On Node.js 20 promptfoo may fail on its way out after "Eval complete"; every test
      // must have passed.
      (printed) => /Eval complete/.test(printed) && new RegExp(`${cases} passed`).test(printed),
    );
    promptfooTimes.push(p);
    line += `, promptfoo ${(p / 1000).toFixed(2)} s (load ${loadPf})`;
  }
  console.log(line);
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const dm = median(dvergrTimes);
console.log(
  `${cases} cases, a shell-script agent, JavaScript grader, ${parallel} at a time ` +
    `(median of ${runs}):`,
);
console.log(
  `  dvergr ${values.isolation === "none" ? "unisolated" : "sandboxed"}  ${
    (dm / 1000).toFixed(2)
  } s`,
);
if (havePromptfoo) {
  const pm = median(promptfooTimes);
  console.log(`  promptfoo exec    ${(pm / 1000).toFixed(2)} s`);
  console.log(`  ratio dvergr / promptfoo = ${(dm / pm).toFixed(2)}`);
}
reportFigure({
  target: "1",
  figure: `dvergr ${values.isolation === "none" ? "unisolated" : "sandboxed"} ${
    (dm / 1000).toFixed(2)
  } s`,
  ...(havePromptfoo
    ? {
      peer: `promptfoo exec ${(median(promptfooTimes) / 1000).toFixed(2)} s`,
      ratio: dm / median(promptfooTimes),
    }
    : {}),
  load: `${firstLoad} → ${await load()}`,
  note: `median of ${runs}, ${cases} cases, --parallel ${parallel}`,
});
if (!Deno.env.get("KEEP")) await Deno.remove(dir, { recursive: true });
else console.log(dir);
