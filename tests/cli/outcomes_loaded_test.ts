/**
 * Outcomes do not depend on the machine's load: a candidate's time starts at its own
 * process's start, so with four CPU burners started here (on a machine of two cores, already
 * shared) an instant crash is still a crash, a hang a time-out and an honest answer a pass,
 * as on a quiet machine (tests/cli/outcomes_cli_test.ts). Wall time ~10 s.
 */
import assert from "node:assert/strict";
import { dvergrWithPath as dvergr } from "../helpers/cli.ts";
import { wordDataset, writeBundleTo } from "../helpers/dataset_bundle.ts";

/** Starts `n` processes that spin on a CPU each until killed. */
function burners(n: number): Deno.ChildProcess[] {
  return Array.from({ length: n }, () =>
    new Deno.Command("sh", {
      args: ["-c", "while :; do :; done"],
      stdin: "null",
      stdout: "null",
      stderr: "null",
    }).spawn());
}

Deno.test("dvergr benchmark gives a crash, a hang and an honest answer the same outcomes under four CPU burners", async () => {
  const dir = await writeBundleTo(wordDataset(2));
  const home = await Deno.makeTempDir();
  const spinning = burners(4);
  try {
    const r = await dvergr([
      "benchmark",
      dir,
      "--candidate",
      "crash=cmd:echo bad input >&2; exit 7",
      "--candidate",
      "hang=cmd:sleep 60",
      "--candidate",
      "honest=cmd:cat docs/q.txt > out/answer.txt",
      // 4 s: the honest command takes milliseconds even here, the hang never ends.
      "--timeout-ms",
      "4000",
      "--parallel",
      "6",
      "--home",
      home,
      "--json",
    ]);
    assert.equal(r.code, 0, r.err);
    const j = JSON.parse(r.out);
    const outcomes = Object.fromEntries(
      j.scorecard.candidates.map((
        c: { candidate: string; outcomes: Record<string, number> },
      ) => [c.candidate, c.outcomes]),
    );
    const only = (o: Record<string, number>) =>
      Object.fromEntries(Object.entries(o).filter(([, n]) => n > 0));
    assert.deepEqual(only(outcomes.crash), { crashed: 2 }, JSON.stringify(j.failureCauses));
    assert.deepEqual(only(outcomes.hang), { "timed-out": 2 }, JSON.stringify(j.failureCauses));
    assert.deepEqual(only(outcomes.honest), { passed: 2 }, JSON.stringify(j.failureCauses));
    assert.match(j.failureCauses.crash[0].cause, /^exit status 7: bad input$/);
  } finally {
    for (const p of spinning) p.kill("SIGKILL");
    await Promise.all(spinning.map((p) => p.status));
    await Deno.remove(home, { recursive: true });
    await Deno.remove(dir.slice(0, dir.lastIndexOf("/")), { recursive: true });
  }
});
