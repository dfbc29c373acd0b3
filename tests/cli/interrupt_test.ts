/**
 * Ctrl-C on a benchmark: the cells in flight stop, the finished ones are kept, the report
 * is written and the process exits 130, as a shell reports a command SIGINT stopped.
 */
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { DVERGR_RUN_FLAGS } from "../../core/permissions.ts";
import { detectBwrap } from "../../adapters/candidates/command/command.ts";
import { wordDataset, writeBundleTo } from "../helpers/dataset_bundle.ts";
import { dvergrWithPath } from "../helpers/cli.ts";

const MAIN = fileURLToPath(new URL("../../main.ts", import.meta.url));
/** Case c1 is answered at once; the others would take a minute. */
const AGENT = 'slow=cmd:case "$DVERGR_CASE" in c1) cat docs/q.txt > out/answer.txt;; ' +
  "*) sleep 60;; esac";

Deno.test("dvergr benchmark stopped by SIGINT keeps what finished, writes its report and exits 130", async () => {
  const dir = await writeBundleTo(wordDataset(4));
  const home = await Deno.makeTempDir();
  const env: Record<string, string> = { PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin" };
  if (!(await detectBwrap((k) => Deno.env.get(k)))) env.DVERGR_ISOLATION = "none";
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", ...DVERGR_RUN_FLAGS, MAIN, "benchmark", dir, "--candidate", AGENT]
      .concat(["--parallel", "4", "--home", home]),
    env,
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const stdout = new Response(child.stdout).text();
  const reader = child.stderr.pipeThrough(new TextDecoderStream()).getReader();
  let err = "";
  // The first cell is done (a quarter: a progress line) while the three others sleep.
  while (!/^progress: 1\/4 /m.test(err)) {
    const { value, done } = await reader.read();
    assert.ok(!done, `the benchmark ended before its first cell: ${err}`);
    err += value;
  }
  child.kill("SIGINT");
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    err += value;
  }
  const status = await child.status;
  const out = await stdout;
  assert.equal(status.code, 130, out + err);
  assert.match(err, /^Stopped: the run was interrupted$/m);
  assert.match(out, /^3 of 4 cells did not finish; run the same command again to resume them$/m);
  const report = await Deno.readTextFile(out.match(/^Report: (.*)$/m)![1]);
  assert.match(report, /\*\*Incomplete:\*\*/);

  const listed = await dvergrWithPath(["experiments", "--home", home, "--json"]);
  const [experiment] = JSON.parse(listed.out).experiments;
  assert.equal(experiment.graded, 1);
  assert.equal(experiment.complete, false);
});
