import assert from "node:assert/strict";
import { attemptRecord as record, crashedRecord, NO_FILE } from "../../helpers/records.ts";
import {
  brokenCandidates,
  brokenLine,
  causeOf,
  countOutcomes,
  failureCauses,
  outcomeCountsText,
  outcomeOf,
} from "../../../core/bench/outcome.ts";
import { stderrTail } from "../../../core/bench/records.ts";

const crashed = crashedRecord;

Deno.test("outcomeOf() gives every attempt one outcome from its record", () => {
  const graded = { checks: { ok: false }, reward: 0 };
  assert.equal(outcomeOf(record({ candidate: "a" })), "passed");
  assert.equal(outcomeOf(record({ candidate: "a", passed: false, verdict: graded })), "failed");
  assert.equal(outcomeOf(crashed("c1")), "crashed");
  assert.equal(
    outcomeOf(record({ candidate: "a", status: "timeout", passed: false, verdict: graded })),
    "timed-out",
  );
  assert.equal(
    outcomeOf(record({ candidate: "a", status: "budget", passed: false, verdict: graded })),
    "budget",
  );
  assert.equal(
    outcomeOf(record({
      candidate: "a",
      status: "fault",
      verdict: null,
      passed: false,
      fault: { source: "checker", kind: "threw", message: "boom" },
    })),
    "fault",
  );
});

Deno.test("countOutcomes() counts each outcome and outcomeCountsText() names the nonzero ones", () => {
  const counts = countOutcomes([record({ candidate: "a" }), crashed("c1"), crashed("c2")]);
  assert.deepEqual(counts, {
    passed: 1,
    failed: 0,
    crashed: 2,
    "timed-out": 0,
    budget: 0,
    fault: 0,
  });
  assert.equal(outcomeCountsText(counts), "1 passed, 2 crashed");
});

Deno.test("failureCauses() groups crashes by exit status and stderr, with an example", () => {
  const causes = failureCauses([
    crashed("c1"),
    crashed("c2"),
    crashed("c3", {
      ending: { message: null, exitCode: 7, signal: null, stderrTail: "line 1\nbad input" },
    }),
    record({ candidate: "mine", caseId: "c4" }),
  ]);
  assert.equal(causes.length, 2);
  assert.equal(causes[0].cause, `exit status 2: ${NO_FILE}`);
  assert.equal(causes[0].count, 2);
  assert.equal(causes[0].example.caseId, "c1");
  assert.equal(causes[0].example.exitCode, 2);
  assert.equal(causes[0].example.stderrTail, NO_FILE);
  assert.equal(causes[1].cause, "exit status 7: bad input");
});

Deno.test("causeOf() keeps budget amounts and world paths out of the grouping key", () => {
  const budget = (m: string) =>
    record({
      candidate: "m",
      status: "budget",
      passed: false,
      verdict: { checks: { "completed?": false }, reward: 0.2 },
      ending: { message: m, exitCode: null, signal: null, stderrTail: null },
    });
  assert.equal(
    causeOf(budget("stopped by budget: $0.0100 spent"))![0],
    causeOf(budget("stopped by budget: $0.0300 spent"))![0],
  );
  const fault = (m: string) =>
    record({
      candidate: "m",
      status: "fault",
      verdict: null,
      passed: false,
      fault: { source: "host", kind: "world", message: m },
    });
  assert.equal(
    causeOf(fault("Cannot create /home/x/worlds/3f2a9c1d0e/out"))![0],
    causeOf(fault("Cannot create /home/x/worlds/77aa00bb11/out"))![0],
  );
  assert.equal(causeOf(record({ candidate: "m" })), null);
});

Deno.test("causeOf() reads an old record's exit status from its message", () => {
  const old = crashed("c1", {
    ending: undefined,
  });
  assert.equal(causeOf(old)![1], "ended abnormally");
  const withMessage = crashed("c1", {
    ending: {
      message: '"x" ended with exit status 9',
      exitCode: null,
      signal: null,
      stderrTail: null,
    },
  });
  assert.equal(causeOf(withMessage)![1], "exit status 9");
});

Deno.test("brokenCandidates() names a candidate every attempt of which crashed, with a --mount hint", () => {
  const broken = brokenCandidates(
    new Map([
      ["mine", [crashed("c1"), crashed("c2")]],
      ["good", [record({ candidate: "good" })]],
    ]),
  );
  assert.equal(broken.length, 1);
  assert.equal(broken[0].candidate, "mine");
  assert.equal(broken[0].how, "crashed");
  assert.match(broken[0].hint, /--mount/);
  assert.match(
    brokenLine(broken[0]),
    /^mine: every attempt \(2\) crashed; first cause: exit status 2: sh: 0: cannot open my_agent\.sh: No such file\. Hint: .*--mount/,
  );
  // Without isolation the path is relative to the world directory instead.
  const bare = brokenCandidates(new Map([["mine", [crashed("c1", { isolated: false })]]]));
  assert.match(bare[0].hint, /absolute path/);
  assert.doesNotMatch(bare[0].hint, /--mount/);
});

Deno.test("stderrTail() keeps the last five non-empty lines, bounded", () => {
  assert.equal(stderrTail("1\n2\n\n3\n4\n5\n6\n7\n"), "3\n4\n5\n6\n7");
  assert.equal(stderrTail(""), null);
  assert.equal(stderrTail("x".repeat(5000))!.length, 1001);
});

Deno.test("causeHint() tells a command that is not found from a script that is not there", () => {
  const notFound = brokenCandidates(
    new Map([[
      "nf",
      [record({
        candidate: "nf",
        status: "crashed",
        verdict: { checks: { "completed?": false }, reward: 0 },
        passed: false,
        ending: {
          message: '"nf" the shell could not run it (exit 127): sh: 1: x: not found',
          exitCode: 127,
          signal: null,
          stderrTail: "sh: 1: x: not found",
        },
      })],
    ]]),
  );
  assert.match(notFound[0].hint, /^The command was not found inside the sandbox/);
  assert.equal(notFound[0].how, "crashed");
  assert.equal(
    notFound[0].cause.cause,
    "the shell could not run it (exit 127): sh: 1: x: not found",
  );
});

Deno.test("causeOf() names a crash by a stopped supervisor, not by the exit status 0 it read", () => {
  // The candidate exited 0, then its pack was cut (chmod 000 of it, a killed supervisor).
  const cut = crashed("c1", {
    ending: {
      message: '"x" stopped the sandbox\'s supervisor before its files were read back',
      exitCode: 0,
      signal: null,
      stderrTail: null,
    },
  });
  assert.equal(
    causeOf(cut)![1],
    "stopped the sandbox's supervisor before its files were read back",
  );
});
