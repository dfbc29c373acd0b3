import assert from "node:assert/strict";
import { readBundleDir } from "../../../adapters/files/bundle_dir.ts";
import { parseBundle } from "../../../core/bundle/parse.ts";
import {
  type AskJudge,
  type CalibrationJudgeRequest,
  calibrationJudgeRequests,
  measureJudgeConsistency,
} from "../../../core/calibrate/judge_consistency.ts";
import { createCheckerPool } from "../../../sandbox/checker_pool.ts";

const RIVALS = new URL("../../../examples/workflows/tool-rivals", import.meta.url).pathname;

const OPTIONS_PROMPT = (name: string) =>
  `Is ${name} a rival of Acme Tools?\nA) a rival\nB) not a rival\nC) cannot tell\nAnswer with the letter.`;

const request = (id: string, prompt: string, expected: string | null): CalibrationJudgeRequest => ({
  id,
  prompt,
  expected,
  from: ["reference"],
});

/** The label of the line holding `text` in the prompt as asked. */
function labelOf(prompt: string, text: string): string {
  const line = prompt.split("\n").find((l) => l.endsWith(") " + text))!;
  return line[0];
}

Deno.test("calibrationJudgeRequests() gathers the requests of the reference and of every variant, once each", async () => {
  const pool = createCheckerPool({ workers: 1 });
  try {
    const bundle = parseBundle(await readBundleDir(RIVALS));
    const { requests, problems } = await calibrationJudgeRequests(bundle, pool);
    assert.deepEqual(problems, []);
    assert.deepEqual(
      requests.map((r) => [r.id, r.expected, r.from.length > 1 ? "shared" : r.from[0]]),
      [
        ["bolt hardware", "Yes, it sells tools to the same carpenters.", "shared"],
        ["nail co", "Yes, hand tools for carpenters.", "shared"],
        ["bolt hardware", "Yes.", "damaged irrelevant"],
        ["pizza planet", "No, it is a restaurant.", "damaged irrelevant"],
        ["bolt hardware", "Yes, it sells tools to the same carpenters.", "damaged not-fetched"],
      ],
    );
    assert.ok(requests[2].prompt.includes("since 1999") && !requests[2].prompt.includes("<title>"));
    assert.ok(requests[4].prompt.includes("(not fetched)"));
  } finally {
    pool.close();
  }
});

Deno.test("measureJudgeConsistency() of a judge that reads the options: kappa 1, no flips, no position bias", async () => {
  const requests = [
    request("bolt", OPTIONS_PROMPT("Bolt"), "A"),
    request("pizza", OPTIONS_PROMPT("Pizza Planet"), "B"),
    request("nail", 'Is Nail & Co a rival? Answer "Yes" or "No".', "Yes."),
  ];
  const asked: string[] = [];
  const ask: AskJudge = (prompt) => {
    asked.push(prompt);
    if (!prompt.includes("A)")) return Promise.resolve({ ok: true, answer: "Yes, it is." });
    const text = prompt.includes("Pizza") ? "not a rival" : "a rival";
    return Promise.resolve({ ok: true, answer: `${labelOf(prompt, text)}) ${text}` });
  };
  const r = await measureJudgeConsistency(requests, ask, { k: 3 });
  assert.deepEqual(r.problems, []);
  assert.equal(r.ok, true);
  assert.equal(r.kappa, 1);
  assert.equal(r.flipRate, 0);
  assert.equal(r.positionBias, 0);
  assert.equal(asked.length, 9);
  // The three asks of an options prompt show the options in three orders.
  assert.equal(new Set(asked.filter((p) => p.includes("Bolt"))).size, 3);
  assert.deepEqual(r.requests[0].said, ["a rival", "a rival", "a rival"]);
  assert.deepEqual(r.requests[0].answers.map((a) => a[0]), ["A", "C", "B"]);
  assert.equal(r.requests[1].expectedSaid, "not a rival");
  assert.equal(r.requests[2].majority, "yes");
});

Deno.test("measureJudgeConsistency() of a judge that always answers A: position bias 1, kappa under 0.6", async () => {
  const requests = [
    request("bolt", OPTIONS_PROMPT("Bolt"), "A"),
    request("pizza", OPTIONS_PROMPT("Pizza Planet"), "B"),
  ];
  const r = await measureJudgeConsistency(
    requests,
    () => Promise.resolve({ ok: true, answer: "A" }),
    { k: 3 },
  );
  assert.equal(r.positionBias, 1);
  assert.equal(r.flipRate, 1);
  assert.ok(r.kappa! < 0.6, String(r.kappa));
  assert.equal(r.ok, false);
  assert.match(r.problems.at(-1)!, /^judge agreement kappa -?0\.\d\d is under 0\.6: asked 3 times/);
  assert.match(
    r.problems[1],
    /^judge request "pizza" \(reference\): calibration\.edn answers "B" \(not a rival\), the judge's majority is split \(a rival, not a rival, cannot tell\)$/,
  );
  const accepted = await measureJudgeConsistency(
    requests,
    () => Promise.resolve({ ok: true, answer: "A" }),
    { k: 3, acceptNoise: true },
  );
  assert.equal(accepted.noiseAccepted, true);
  assert.ok(accepted.problems.every((p) => !p.startsWith("judge agreement")));
});

Deno.test("measureJudgeConsistency() names a judge that fails and a calibration that makes no requests", async () => {
  const failing = await measureJudgeConsistency(
    [request("bolt", "Is Bolt a rival?", "Yes")],
    () => Promise.resolve({ ok: false, message: "HTTP 529 overloaded" }),
  );
  assert.deepEqual(failing.problems, [
    'judge request "bolt": the judge failed: HTTP 529 overloaded',
  ]);
  const none = await measureJudgeConsistency([], () => Promise.resolve({ ok: true, answer: "x" }));
  assert.deepEqual(none.problems, ["the calibration makes no judge requests: nothing to measure"]);
  assert.equal(none.kappa, null);
});
