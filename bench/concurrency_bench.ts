// A bench script: its figures on the console are its output.
// deno-lint-ignore-file no-console
/**
 * dvergr's own memory per concurrent command attempt: N cases (default 64) whose candidate
 * sleeps (default 30 s), all at once (`--parallel N`), sandboxed as a benchmark runs them.
 * While they sleep, the resident memory (RSS, from ps) of every process of the dvergr run is
 * summed — the dvergr process, its checker workers and everything it starts per attempt
 * (bubblewrap, the supervisor, the gateway's forwarder, the timer) — but the candidates' own
 * processes (the `sleep` each runs). The same is taken for one case at `--parallel 1`; the
 * figure is the difference divided by the attempts added. Also prints how many processes of
 * ours each attempt keeps alive.
 *
 *   deno run <dvergr permissions> bench/concurrency_bench.ts [--attempts 64] [--sleep 30]
 */
import { join } from "node:path";
import { parseArgs } from "node:util";
import { DVERGR_RUN_FLAGS } from "../core/permissions.ts";
import { reportFigure } from "./figures.ts";

const { values } = parseArgs({
  args: Deno.args,
  options: {
    attempts: { type: "string", default: "64" },
    sleep: { type: "string", default: "30" },
  },
});
const attempts = Number(values.attempts);
const sleepS = Number(values.sleep);
const dir = await Deno.makeTempDir({ prefix: "dvergr-concurrency-bench-" });

async function write(rel: string, text: string): Promise<void> {
  await Deno.mkdir(join(dir, rel, ".."), { recursive: true });
  await Deno.writeTextFile(join(dir, rel), text);
}
await write("bundle/workflow.edn", '{:title "Sleepers" :task "Sleep, then stop."}');
await write(
  "bundle/checker.js",
  `export function check({ files }) {
  const ok = (files["/out/answer.txt"] ?? "") === "x";
  return { checks: { ok }, reward: ok ? 1 : 0 };
}`,
);
await write(
  "bundle/calibration.edn",
  '{:case "c0001" :reference {"/out/answer.txt" "x"} :damaged {:wrong {:files {"/out/answer.txt" "y"} :loses [:ok]}}}',
);
for (let i = 1; i <= attempts; i++) {
  const id = `c${String(i).padStart(4, "0")}`;
  await write(`bundle/cases/${id}/fixtures/docs/case.txt`, id);
  await write(`bundle/cases/${id}/gold.edn`, "{:ok true}");
}

const command = `sleep ${sleepS}`;

interface Proc {
  pid: number;
  ppid: number;
  rssKiB: number;
  args: string;
}

async function processes(): Promise<Proc[]> {
  const out = await new Deno.Command("ps", {
    args: ["-e", "-o", "pid=,ppid=,rss=,args="],
    stdout: "piped",
  }).output();
  return new TextDecoder().decode(out.stdout).split("\n").flatMap((line) => {
    const m = /^\s*(\d+)\s+(\d+)\s+(\d+)\s+(.*)$/.exec(line);
    return m ? [{ pid: +m[1], ppid: +m[2], rssKiB: +m[3], args: m[4] }] : [];
  });
}

/** The processes of the tree under `root`: ours, and the candidates' own. */
function tree(all: Proc[], root: number): { ours: Proc[]; candidates: Proc[] } {
  const children = new Map<number, Proc[]>();
  for (const p of all) children.set(p.ppid, [...(children.get(p.ppid) ?? []), p]);
  const ours: Proc[] = [];
  const candidates: Proc[] = [];
  const stack = all.filter((p) => p.pid === root);
  while (stack.length > 0) {
    const p = stack.pop()!;
    if (p.args === command || p.args === `/bin/sh -c ${command}`) candidates.push(p);
    else ours.push(p);
    stack.push(...(children.get(p.pid) ?? []));
  }
  return { ours, candidates };
}

/** What a process of ours is, for the breakdown. */
function kindOf(args: string): string {
  if (args.includes("dvergr-staged")) return "staging bwrap (one per dvergr process)";
  if (args.includes("dvergr-supervisor")) return "supervisor (sh)";
  if (args.startsWith("bwrap")) return "bwrap";
  if (args.startsWith("tcpserver") || args.includes("/tcpserver")) {
    return "tcpserver (gateway forwarder)";
  }
  if (args.includes("socat")) return "socat (gateway forwarder)";
  if (args.startsWith("cat ")) return "marks reader (cat)";
  if (args.startsWith("sleep ")) return "time limit (sleep)";
  if (/^(\/bin\/)?sh /.test(args)) return "sh";
  if (args.includes("checker_process") || args.includes("--deny-read")) return "checker worker";
  if (args.includes("main.ts")) return "dvergr";
  return args.split(" ")[0];
}

/** Runs the job with `n` cases at once; the census taken when most candidates slept. */
async function census(n: number) {
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      ...DVERGR_RUN_FLAGS,
      new URL("../main.ts", import.meta.url).pathname,
      "benchmark",
      join(dir, "bundle"),
      "--candidate",
      `sleeper=cmd:${command}`,
      "--cases",
      String(n),
      "--parallel",
      String(n),
      "--timeout-ms",
      String((sleepS + 60) * 1000),
      "--home",
      join(dir, `home-${n}`),
    ],
    env: { NO_COLOR: "1" },
    stdout: "null",
    stderr: "null",
  }).spawn();
  let best = { ours: [] as Proc[], candidates: [] as Proc[] };
  const deadline = Date.now() + sleepS * 1000 * 0.8;
  while (Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 1000));
    const t = tree(await processes(), child.pid);
    const sleeping = (x: typeof t) => x.candidates.filter((p) => p.args === command).length;
    if (sleeping(t) > sleeping(best)) best = t;
    if (sleeping(t) >= n && Date.now() > deadline - sleepS * 1000 * 0.4) {
      best = t;
      break;
    }
  }
  await child.status;
  const kib = best.ours.reduce((a, p) => a + p.rssKiB, 0);
  // A candidate's shell and its sleep (dash runs the command as a child): one attempt.
  const running = best.candidates.filter((p) => p.args === command).length;
  const byKind = new Map<string, { n: number; kib: number }>();
  for (const p of best.ours) {
    const kind = kindOf(p.args);
    const k = byKind.get(kind) ?? { n: 0, kib: 0 };
    byKind.set(kind, { n: k.n + 1, kib: k.kib + p.rssKiB });
  }
  return { running, processes: best.ours.length, mib: kib / 1024, byKind };
}

const load = async () =>
  new TextDecoder().decode(
    (await new Deno.Command("cat", { args: ["/proc/loadavg"], stdout: "piped" }).output())
      .stdout,
  ).split(" ")[0];

const loadBefore = await load();
const one = await census(1);
const many = await census(attempts);
const per = (many.mib - one.mib) / (many.running - one.running);
const loadAfter = await load();
console.log(`load average ${loadBefore} → ${loadAfter}`);
console.log(
  `1 attempt:   ${one.mib.toFixed(1)} MiB in ${one.processes} processes of dvergr's ` +
    `(${one.running} candidate sleeping)`,
);
console.log(
  `${attempts} attempts: ${many.mib.toFixed(1)} MiB in ${many.processes} processes of ` +
    `dvergr's (${many.running} candidates sleeping)`,
);
for (const [kind, k] of [...many.byKind.entries()].sort(([a], [b]) => (a < b ? -1 : 1))) {
  console.log(`  ${kind}: ${k.n} processes, ${(k.kib / 1024).toFixed(1)} MiB`);
}
console.log(
  `dvergr's memory per concurrent attempt: ${per.toFixed(2)} MiB RSS, ` +
    `${((many.processes - one.processes) / (many.running - one.running)).toFixed(1)} processes`,
);
reportFigure({
  target: "2a",
  figure: `${per.toFixed(1)} MiB`,
  load: `${loadBefore} → ${loadAfter}`,
  note: `${attempts} attempts at once`,
});
if (!Deno.env.get("KEEP")) await Deno.remove(dir, { recursive: true });
else console.log(dir);
