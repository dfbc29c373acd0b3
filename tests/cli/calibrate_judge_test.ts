/**
 * `dvergr calibrate --judge-consistency` against scripted judges on a local Anthropic
 * Messages server (127.0.0.1): one consistent, one that flips half its answers, one that
 * always answers the first option, one that reads the options.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { parse, type TestSuites } from "junit2json";
import { runMain } from "../../main.ts";
import { memoryContext } from "../../cli/context.ts";
import { writeTree } from "../../adapters/files/bundle_dir.ts";
import { JUDGE_SYSTEM_PROMPT } from "../../adapters/providers/judge_model.ts";
import { type FakeScript, type FakeServer, startFakeAnthropic } from "../helpers/fake_providers.ts";
import { cityFiles, RIGHT_CHECKER } from "../helpers/city_bundle.ts";

const RIVALS = new URL("../../examples/workflows/tool-rivals", import.meta.url).pathname;

function promptOf(t: Parameters<FakeScript>[0]): string {
  const m = (t.body.messages as { content: string | { text: string }[] }[])[0].content;
  return typeof m === "string" ? m : m.map((c) => c.text).join("");
}

/** Yes for Bolt and Nail & Co, no for Pizza Planet: what calibration.edn says. */
function truth(prompt: string): string {
  return prompt.includes("Pizza Planet") ? "No, it is a restaurant." : "Yes, it sells tools.";
}

/** The consistent judge. */
const consistent: FakeScript = (t) => {
  assert.equal(t.system, JUDGE_SYSTEM_PROMPT);
  return { text: truth(promptOf(t)), usage: { input_tokens: 300, output_tokens: 8 } };
};

/** Answers every second ask of each prompt the other way: half its answers flip. */
function flipper(): FakeScript {
  const asked = new Map<string, number>();
  return (t) => {
    const p = promptOf(t);
    const n = (asked.get(p) ?? 0) + 1;
    asked.set(p, n);
    const right = truth(p);
    return { text: n % 2 === 0 ? (right.startsWith("Yes") ? "No." : "Yes.") : right };
  };
}

async function withJudge<T>(
  script: FakeScript,
  f: (s: FakeServer, env: Record<string, string>) => Promise<T>,
) {
  const server = await startFakeAnthropic(script, { apiKey: "ak" });
  try {
    return await f(server, { ANTHROPIC_API_KEY: "ak", ANTHROPIC_BASE_URL: server.url });
  } finally {
    await server.close();
  }
}

async function dvergr(env: Record<string, string>, ...args: string[]) {
  const ctx = memoryContext({ env, cwd: await Deno.makeTempDir() });
  const code = await runMain(args, ctx);
  return { code, out: ctx.out.join(""), err: ctx.err.join("") };
}

Deno.test("dvergr calibrate --judge-consistency passes a consistent judge: kappa 1.00, flip rate 0.00", async () => {
  await withJudge(consistent, async (server, env) => {
    const r = await dvergr(env, "calibrate", RIVALS, "--judge-consistency");
    assert.equal(r.code, 0, r.out + r.err);
    // Five requests (the reference's two, three more of damaged variants), three asks each.
    assert.equal(server.requests.length, 15);
    assert.match(r.out, /^Judge consistency \(5 requests, each asked 3 times\):$/m);
    assert.match(r.out, /^ {2}pizza planet {4}no \| no \| no {2}majority: no {2}calibration: no$/m);
    assert.match(
      r.out,
      /^kappa 1\.00 \(minimum 0\.6\) {2}flip rate 0\.00 {2}position bias n\/a \(no request lists options\)$/m,
    );
    assert.match(
      r.out,
      /^calibrated: .*; the judge agrees with itself and with calibration\.edn$/m,
    );
  });
});

Deno.test("dvergr calibrate --judge-consistency fails a judge that flips half its answers", async () => {
  await withJudge(flipper(), async (_server, env) => {
    const junit = join(await Deno.makeTempDir(), "cal.xml");
    const r = await dvergr(
      env,
      "calibrate",
      RIVALS,
      "--judge-consistency",
      "--k",
      "4",
      "--json",
      "--junit",
      junit,
    );
    assert.equal(r.code, 1, r.out + r.err);
    const doc = await parse(await Deno.readTextFile(junit)) as TestSuites;
    const cases = doc.testsuite![0].testcase!;
    assert.equal(cases.find((c) => c.name === "judge consistency")!.failure![0].type, "judge");
    assert.equal(doc.failures, 1, "the judge's problems are one failure, not loose ones");
    const data = JSON.parse(r.out);
    assert.equal(data.ok, false);
    const j = data.judgeConsistency;
    assert.equal(j.k, 4);
    assert.equal(j.flipRate, 1);
    assert.ok(Math.abs(j.kappa - -1 / 3) < 1e-9, String(j.kappa));
    assert.ok(
      data.problems.some((p: string) => /^judge agreement kappa -0\.33 is under 0\.6/.test(p)),
      data.problems.join("\n"),
    );
    // Two yes and two no: no majority, so calibration.edn's answers are not borne out.
    assert.ok(
      data.problems.some((p: string) => /"pizza planet" .*the judge's majority is split/.test(p)),
    );
  });
});

Deno.test("dvergr calibrate --accept-judge-noise lets a noisy judge pass when its majority agrees", async () => {
  await withJudge(flipper(), async (_server, env) => {
    const r = await dvergr(env, "calibrate", RIVALS, "--judge-consistency", "--accept-judge-noise");
    assert.equal(r.code, 0, r.out + r.err);
    assert.match(r.out, /^kappa -?0\.\d\d \(minimum 0\.6, noise accepted\) {2}flip rate 1\.00/m);
    assert.match(r.out, /FLIPPED$/m);
    assert.match(r.out, /; the judge's noise \(kappa -?0\.\d\d\) is accepted$/m);
  });
});

/** The city bundle with a judge whose prompt lists options; calibration.edn says "A". */
async function optionsBundle(): Promise<string> {
  const files = cityFiles(
    RIGHT_CHECKER.replace(
      "export function check",
      `export function judgeRequests() {
  return [{ id: "capital", prompt: "Is Oslo the capital of Norway?\\nA) yes\\nB) no\\nC) unsure\\nAnswer with the letter." }];
}
export function check`,
    ),
  );
  files.set(
    "workflow.edn",
    '{:title "City" :task "Write the capital of Norway." :judge {:model "haiku" :max-requests 2}}',
  );
  files.set(
    "calibration.edn",
    '{:reference {"/out/answer.edn" "{:city \\"Oslo\\" :population 709037}"} :judgements {"capital" "A"}}',
  );
  const dir = join(await Deno.makeTempDir(), "city");
  await writeTree(dir, files);
  return dir;
}

Deno.test("dvergr calibrate --judge-consistency rotates listed options and measures position bias", async () => {
  const dir = await optionsBundle();
  const firstAlways: FakeScript = () => ({ text: "A" });
  await withJudge(firstAlways, async (server, env) => {
    const r = await dvergr(env, "calibrate", dir, "--judge-consistency", "--auto");
    assert.equal(r.code, 1, r.out + r.err);
    const prompts = server.requests.map((q) => JSON.stringify(q.body));
    assert.equal(new Set(prompts).size, 3, "three orders of the options");
    assert.match(
      r.out,
      /^ {2}capital +yes \| no \| unsure {2}majority: none {2}calibration: yes {2}\(3 options, rotated\) {2}FLIPPED$/m,
    );
    assert.match(r.out, /position bias 1\.00$/m);
  });
  // A judge that reads the options answers the label of "yes" wherever it is.
  const reader: FakeScript = (t) => {
    const line = promptOf(t).split("\n").find((l) => l.endsWith(") yes"))!;
    return { text: line[0] };
  };
  await withJudge(reader, async (_server, env) => {
    const r = await dvergr(env, "calibrate", dir, "--judge-consistency", "--auto");
    assert.equal(r.code, 0, r.out + r.err);
    assert.match(
      r.out,
      /^kappa undefined \(one answer throughout\) .* {2}flip rate 0\.00 {2}position bias 0\.00$/m,
    );
  });
});

Deno.test("dvergr calibrate --judge-consistency refuses a bundle without :judge, a missing key and stray flags, exit 2", async () => {
  const noJudge = await dvergr(
    {},
    "calibrate",
    join(RIVALS, "../meeting-actions"),
    "--judge-consistency",
  );
  assert.equal(noJudge.code, 2);
  assert.match(
    noJudge.err,
    /Cannot measure the judge of bundle "meeting-actions": its workflow\.edn has no :judge/,
  );
  const noKey = await dvergr({}, "calibrate", RIVALS, "--judge-consistency");
  assert.equal(noKey.code, 2);
  assert.match(noKey.err, /ANTHROPIC_API_KEY is not set/);
  for (const flags of [["--k", "3"], ["--accept-judge-noise"]]) {
    const r = await dvergr({}, "calibrate", RIVALS, ...flags);
    assert.equal(r.code, 2);
    assert.match(r.err, new RegExp(`Cannot use ${flags[0]} without --judge-consistency`));
  }
  const big = await dvergr({}, "calibrate", RIVALS, "--judge-consistency", "--k", "50");
  assert.equal(big.code, 2);
  assert.match(big.err, /Cannot use --k "50": expected a whole number from 2 to 20/);
});
