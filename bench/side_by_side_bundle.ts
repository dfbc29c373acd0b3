/**
 * The bundle of the side-by-side job (bench/promptfoo_compare.ts, bench/memory_bench.ts):
 * one case per word (`c0001` asks for `w1`…), the instant reference candidate's answer is
 * the first case's, and a small JavaScript checker compares.
 */
import { join } from "node:path";
import { DVERGR_RUN_FLAGS } from "../core/permissions.ts";

/** Writes the bundle of `cases` cases to `dir` (created). */
export async function writeSideBySideBundle(dir: string, cases: number): Promise<void> {
  const write = async (rel: string, text: string) => {
    await Deno.mkdir(join(dir, rel, ".."), { recursive: true });
    await Deno.writeTextFile(join(dir, rel), text);
  };
  await write(
    "workflow.edn",
    '{:title "Side by side" :task "Write the word in /docs/q.txt to /out/answer.txt."}',
  );
  await write(
    "checker.js",
    `export function check({ files, gold }) {
  const text = (files["/out/answer.txt"] ?? "").trim();
  return { checks: { right: text === gold.word }, reward: text === gold.word ? 1 : 0 };
}`,
  );
  await write(
    "calibration.edn",
    '{:case "c0001" :reference {"/out/answer.txt" "w1"} :damaged {:wrong {:files {"/out/answer.txt" "x"} :loses [:right]}}}',
  );
  for (let i = 1; i <= cases; i++) {
    const id = `c${String(i).padStart(4, "0")}`;
    await write(`cases/${id}/fixtures/docs/q.txt`, `w${i}`);
    await write(`cases/${id}/gold.edn`, `{:word "w${i}"}`);
  }
}

/** The command that runs the side-by-side job in dvergr: `dvergr benchmark` on a fresh home. */
export function sideBySideBenchmarkArgv(
  bundle: string,
  home: string,
  opts: { parallel: string; repetitions?: number },
): string[] {
  return [
    Deno.execPath(),
    "run",
    ...DVERGR_RUN_FLAGS,
    new URL("../main.ts", import.meta.url).pathname,
    "benchmark",
    bundle,
    "--candidate",
    "builtin:reference",
    ...(opts.repetitions === undefined ? [] : ["--repetitions", String(opts.repetitions)]),
    "--parallel",
    opts.parallel,
    "--home",
    home,
  ];
}

/** promptfoo's main script in the scratch directory promptfoo 0.123.1 was installed into. */
export function promptfooMainIn(scratch: string | undefined): string {
  return scratch ? join(scratch, "node_modules/promptfoo/dist/src/main.js") : "";
}

/** The command that runs a promptfoo eval of `config` as the benches time it (no cache, writes or table). */
export function promptfooEvalArgv(main: string, config: string, parallel: string): string[] {
  return [
    "node",
    main,
    "eval",
    "-c",
    config,
    "-j",
    parallel,
    "--no-cache",
    "--no-write",
    "--no-table",
  ];
}
