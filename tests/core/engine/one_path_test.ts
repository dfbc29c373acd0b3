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
