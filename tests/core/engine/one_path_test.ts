/**
 * The CLI and MCP share one path per use case: the same benchmark from `dvergr benchmark`
 * and from catalog_benchmark is the same experiment with the same scorecard, and `--param`
 * texts reach the checker as the same values from check, benchmark and MCP.
 */
import assert from "node:assert/strict";
import { memoryContext } from "../../../cli/context.ts";
import { runMain } from "../../../main.ts";
import { openHome } from "../../../adapters/store/kv/home.ts";
import { writeTree } from "../../../adapters/files/bundle_dir.ts";
import type { Op } from "../../../core/ops/op.ts";
import { callOp } from "../../../core/ops/registry.ts";
import { catalogBenchmark, catalogCheck } from "../../../core/ops/catalog_run.ts";
import type { Scorecard } from "../../../core/bench/scorecard.ts";
import { createCheckerPool } from "../../../sandbox/checker_pool.ts";
import { wordDataset } from "../../helpers/dataset_bundle.ts";
import { testOpContext } from "../../helpers/op_context.ts";
import { scorecardEssentials } from "../../helpers/scorecard.ts";
import { parse } from "../../../cli/benchmark.ts";
import { candidateKinds } from "../../../adapters/candidates/registry.ts";
import {
  BENCHMARK_FIELDS,
  benchmarkRequestOf,
  readBenchmarkArgs,
} from "../../../core/ops/benchmark_request.ts";

/** Grades the word, and says whether params x and n arrived as the text "007" and the number 3. */
const PARAMS_CHECKER = `
export function check({ files, gold, params }) {
  const right = (files["/out/answer.txt"] ?? "").trim() === gold.word;
  return {
    checks: { right, "x-is-text-007": params.x === "007", "n-is-3": params.n === 3 },
    reward: right ? 1 : 0,
  };
}
`;

const PARAM_FLAGS = ["--param", "x=007", "--param", "n=3"];
const PARAM_TEXTS = { x: "007", n: "3" };

/** A new home whose room "books" holds the bundle at workflows/words/. */
async function homeWithBundle(): Promise<string> {
  const dir = await Deno.makeTempDir({ prefix: "dvergr-one-path-" });
  const home = await openHome(dir);
  try {
    await home.rooms.createRoom("books");
    const files = new Map<string, string | null>();
    for (const [p, t] of wordDataset(3, { "checker.js": PARAMS_CHECKER })) {
      files.set(`workflows/words/${p}`, t);
    }
    await home.rooms.writeFiles("books", files, "Words bundle");
  } finally {
    await home.close();
  }
  return dir;
}

async function dvergr(args: string[], env: Record<string, string> = {}) {
  const ctx = memoryContext({ env: { DVERGR_ISOLATION: "none", ...env } });
  const code = await runMain(args, ctx);
  return { code, out: ctx.out.join(""), err: ctx.err.join("") };
}

/** Runs an op on the home at `dir` without a job runner (the work runs inline). */
async function mcpCall(
  dir: string,
  op: Op,
  input: unknown,
) {
  const home = await openHome(dir);
  const pool = createCheckerPool({ workers: 1 });
  try {
    return await callOp(op, testOpContext(home, pool), input) as Record<string, unknown>;
  } finally {
    pool.close();
    await home.close();
  }
}

Deno.test("benchmark from the CLI and catalog_benchmark over MCP: the same experiment id and scorecard", async () => {
  const cliHome = await homeWithBundle();
  const mcpHome = await homeWithBundle();
  const candidates = ["builtin:reference", "builtin:noop"];

  const cli = await dvergr([
    "benchmark",
    "books/words",
    "--home",
    cliHome,
    ...candidates.flatMap((c) => ["--candidate", c]),
    "--repetitions",
    "2",
    ...PARAM_FLAGS,
    "--json",
  ]);
  assert.equal(cli.code, 0, cli.out + cli.err);
  const cliOut = JSON.parse(cli.out) as { experiment: string; scorecard: Scorecard };

  const mcp = await mcpCall(mcpHome, catalogBenchmark, {
    room: "books",
    name: "words",
    candidates,
    repetitions: 2,
    params: PARAM_TEXTS,
  });
  assert.equal(mcp.experiment, cliOut.experiment);
  assert.equal(mcp.complete, true);

  const home = await openHome(mcpHome);
  let mcpCard: Scorecard;
  try {
    mcpCard = (await home.state.getScorecard(cliOut.experiment)) as Scorecard;
  } finally {
    await home.close();
  }
  assert.equal(mcpCard.bundleId, cliOut.scorecard.bundleId);
  assert.deepEqual(scorecardEssentials(mcpCard), scorecardEssentials(cliOut.scorecard));
  // The params arrived as "007" (text) and 3 (a number) on both paths.
  const reference = cliOut.scorecard.candidates.find((c) => c.candidate === "builtin:reference")!;
  assert.equal(reference.checkRates["x-is-text-007"], 1);
  assert.equal(reference.checkRates["n-is-3"], 1);

  // The same request over MCP on the CLI's home resumes the CLI's experiment.
  const again = await mcpCall(cliHome, catalogBenchmark, {
    room: "books",
    name: "words",
    candidates,
    repetitions: 2,
    params: PARAM_TEXTS,
  });
  assert.equal(again.experiment, cliOut.experiment);
});

Deno.test("check --param and catalog_check params give the checker the same values", async () => {
  const dir = await homeWithBundle();
  const answer = await Deno.makeTempDir();
  await writeTree(answer, new Map([["out/answer.txt", "w2"]]));
  const cli = await dvergr([
    "check",
    "books/words",
    "--home",
    dir,
    "--answer",
    answer,
    "--case",
    "c2",
    ...PARAM_FLAGS,
    "--json",
  ]);
  assert.equal(cli.code, 0, cli.out + cli.err);
  const mcp = await mcpCall(dir, catalogCheck, {
    room: "books",
    name: "words",
    answer: { "/out/answer.txt": "w2" },
    case: "c2",
    params: PARAM_TEXTS,
  });
  const cliVerdict = JSON.parse(cli.out).verdict;
  assert.deepEqual(mcp.verdict, {
    ...cliVerdict,
    run: { ...cliVerdict.run, ms: (mcp.verdict as { run: { ms: number } }).run.ms },
  });
  assert.deepEqual(cliVerdict.run.verdict.checks, {
    right: true,
    "x-is-text-007": true,
    "n-is-3": true,
  });
});

/** Every field catalog_benchmark takes, as flags of `dvergr benchmark` and as MCP arguments. */
const SAME_REQUEST: { flags: string[]; args: Record<string, unknown> } = {
  flags: [
    "--candidate",
    "builtin:reference",
    "--candidate",
    "claude=agent:claude-code:claude-sonnet-4-5",
    "--models",
    "gpt-4.1-mini,claude-haiku-4-5",
    "--repetitions",
    "3",
    "--cases",
    "7",
    "--case-ids",
    "c1,c2",
    "--split",
    "train",
    "--seed",
    "42",
    "--parallel",
    "2",
    "--timeout-ms",
    "90000",
    "--budget-dollars",
    "0.25",
    "--param",
    "x=007",
    "--param",
    ":n=3",
    "--baseline",
    "builtin:reference",
    "--stop-when-decided",
    "--delta",
    "0.05",
    "--alpha",
    "0.1",
    "--memory-mib",
    "2048",
    "--world-mib",
    "64",
    "--max-processes",
    "100",
    "--open-files",
    "256",
    "--allow-sources",
    "docs.example.com,Example.org",
    "--block-sources",
    "answers.example.org",
  ],
  args: {
    candidates: ["builtin:reference", "claude=agent:claude-code:claude-sonnet-4-5"],
    models: ["gpt-4.1-mini", "claude-haiku-4-5"],
    repetitions: 3,
    cases: 7,
    case_ids: ["c1", "c2"],
    split: "train",
    seed: 42,
    parallel: 2,
    timeout_ms: 90000,
    budget_dollars: 0.25,
    params: { x: "007", ":n": "3" },
    baseline: "builtin:reference",
    stop_when_decided: true,
    delta: 0.05,
    alpha: 0.1,
    memory_mib: 2048,
    world_mib: 64,
    max_processes: 100,
    open_files: 256,
    allow_sources: ["docs.example.com", "Example.org"],
    block_sources: ["answers.example.org"],
  },
};

/** The engine's request from CLI flags and from MCP arguments (through the op's schema). */
function bothRequests(flags: string[], args: Record<string, unknown>) {
  const cli = benchmarkRequestOf(parse(["books/words", ...flags]).input, candidateKinds, "cli");
  const checked = catalogBenchmark.input.parse({ room: "books", name: "words", ...args });
  const mcp = benchmarkRequestOf(readBenchmarkArgs(checked), candidateKinds, "mcp");
  return { cli, mcp };
}

Deno.test("benchmarkRequestOf(): benchmark's flags and catalog_benchmark's arguments give the same request", () => {
  const withArg = Object.values(BENCHMARK_FIELDS).filter((f) => f.arg !== null).map((f) => f.arg);
  assert.deepEqual(Object.keys(SAME_REQUEST.args).sort(), withArg.sort(), "every argument tried");
  const { cli, mcp } = bothRequests(SAME_REQUEST.flags, SAME_REQUEST.args);
  assert.deepEqual(cli, mcp);
  assert.equal(cli.budgetMicros, 250_000);
  assert.deepEqual(cli.params, { x: "007", n: 3 });
  assert.equal(cli.split, "train");
  assert.equal(cli.seed, 42);
  assert.deepEqual(cli.stopWhenDecided, { alpha: 0.1, delta: 0.05 });
  assert.equal(cli.limits.memoryBytes, 2048 * 1024 * 1024);
  assert.deepEqual(cli.specs.map((s) => s.kind), ["builtin", "agent", "model", "model"]);
  assert.deepEqual(cli.sources, {
    allow: ["docs.example.com", "Example.org"],
    block: ["answers.example.org"],
  });
  // Nothing given: the same defaults.
  const none = bothRequests(["--candidate", "builtin:noop"], { candidates: ["builtin:noop"] });
  assert.deepEqual(none.cli, none.mcp);
  assert.equal(none.cli.parallel, 4);
});

Deno.test("benchmarkRequestOf(): each surface names its own fields when it refuses a request", () => {
  const cli = () => benchmarkRequestOf(parse(["b", "--delta", "0.1"]).input, candidateKinds, "cli");
  assert.throws(cli, /Cannot benchmark without candidates/);
  assert.throws(
    () =>
      benchmarkRequestOf(
        parse(["b", "--candidate", "builtin:noop", "--delta", "0.1"]).input,
        candidateKinds,
        "cli",
      ),
    /Cannot use --delta or --alpha without --stop-when-decided/,
  );
  assert.throws(
    () =>
      benchmarkRequestOf(
        readBenchmarkArgs({ candidates: ["builtin:noop"], alpha: 0.1 }),
        candidateKinds,
        "mcp",
      ),
    /Cannot use delta or alpha without stop_when_decided/,
  );
  // An inline command line is refused over MCP only.
  const inline = "me=cmd:sh agent.sh";
  const cliInline = benchmarkRequestOf(
    parse(["b", "--candidate", inline]).input,
    candidateKinds,
    "cli",
  );
  assert.equal(cliInline.specs[0].kind, "command");
  assert.throws(
    () => benchmarkRequestOf({ candidates: [inline] }, candidateKinds, "mcp"),
    /inline commands are not accepted here/,
  );
  // MCP keeps its tighter ceilings (the README's table of ranges).
  assert.equal(parse(["b", "--repetitions", "11"]).input.repetitions, 11);
  assert.throws(() => catalogBenchmark.input.parse({ room: "r", name: "n", repetitions: 11 }));
  assert.throws(() => parse(["b", "--case-ids", "a,,b"]), /--case-ids "a,,b": it has an empty id/);
  assert.throws(() => parse(["b", "--models", "a,"]), /the model list has an empty item/);
  // A source is a host name, as a bundle's source lists hold them, on both surfaces.
  assert.throws(
    () =>
      benchmarkRequestOf(
        parse(["b", "--candidate", "builtin:noop", "--block-sources", "https://x.com/a"]).input,
        candidateKinds,
        "cli",
      ),
    /Cannot use --block-sources: "https:\/\/x.com\/a" is a URL: a source is a host name such as "x.com"/,
  );
  assert.throws(
    () =>
      benchmarkRequestOf(
        readBenchmarkArgs({ candidates: ["builtin:noop"], allow_sources: ["x.com:8080"] }),
        candidateKinds,
        "mcp",
      ),
    /Cannot use allow_sources: "x.com:8080" is not a host name/,
  );
  assert.throws(() => parse(["b", "--allow-sources", "a,,b"]), /it has an empty host/);
});
