import assert from "node:assert/strict";
import {
  MARK,
  MARKS_FD,
  OPEN_MARKS_FD,
  StderrMarks,
} from "../../../../adapters/candidates/command/sandbox_marks.ts";

/**
 * Runs `script` as the launch shell runs the supervisor (MARKS_FD a copy of its stderr) and
 * reads its stderr through the marks, in chunks of `chunk` bytes (1: every byte on its own).
 */
async function run(script: string, chunk = 1 << 16) {
  const out = await new Deno.Command("/bin/sh", {
    args: ["-c", `${OPEN_MARKS_FD}\n${script}`],
    env: { MARK },
    stderr: "piped",
  }).output();
  const marks = new StderrMarks();
  const went: number[] = [];
  marks.onGo(() => went.push(performance.now()));
  const kept: Uint8Array[] = [];
  for (let at = 0; at < out.stderr.length; at += chunk) {
    kept.push(marks.feed(out.stderr.subarray(at, at + chunk)));
  }
  kept.push(marks.end());
  await marks.settled();
  const text = new TextDecoder().decode(
    kept.reduce((a, b) => {
      const c = new Uint8Array(a.length + b.length);
      c.set(a);
      c.set(b, a.length);
      return c;
    }, new Uint8Array(0)),
  );
  return { marks, went, text, code: out.code };
}

const say = (word: string) => `echo "$MARK ${word}" >&${MARKS_FD}`;

Deno.test("StderrMarks hears started, then go, on the descriptor the launch shell opens, and keeps the rest of stderr", async () => {
  for (const chunk of [1, 3, 1 << 16]) {
    const { marks, went, text, code } = await run(
      [
        "echo 'bwrap: a warning' >&2",
        say("started"),
        "echo 'cp: seeding' >&2",
        say("go"),
        `exec ${MARKS_FD}>&-`,
        `echo "the candidate's own: $MARK started" >&2`,
        `echo "$MARK go" >&2`,
        "exit 3",
      ].join("\n"),
      chunk,
    );
    assert.equal(code, 3);
    assert.equal(marks.started, true);
    assert.notEqual(marks.goAt, null);
    assert.equal(went.length, 1);
    // Our marks are gone from the output; what the candidate wrote after go stays, marks or not.
    assert.equal(
      text,
      `bwrap: a warning\ncp: seeding\nthe candidate's own: ${MARK} started\n${MARK} go\n`,
      `chunks of ${chunk}`,
    );
  }
});

Deno.test("StderrMarks takes go only after started, and each mark once", async () => {
  const early = await run([say("go"), say("started")].join("\n"));
  assert.equal(early.marks.started, true);
  assert.equal(early.marks.goAt, null);
  const twice = await run([say("started"), say("go"), say("go"), say("started")].join("\n"));
  assert.equal(twice.went.length, 1);
});

Deno.test("StderrMarks without a mark: not started, no go, stderr kept as it was", async () => {
  const { marks, text } = await run("printf 'bwrap: cannot mount\\nno newline'  >&2; exit 1");
  assert.equal(marks.started, false);
  assert.equal(marks.goAt, null);
  assert.equal(text, "bwrap: cannot mount\nno newline");
});

Deno.test("StderrMarks reads a mark after another writer's text on its line, and keeps that text", async () => {
  const { marks, text } = await run(
    ["printf 'partial line: ' >&2", say("started"), say("go")].join("\n"),
  );
  assert.equal(marks.started, true);
  assert.notEqual(marks.goAt, null);
  assert.equal(text, "partial line: \n");
});
