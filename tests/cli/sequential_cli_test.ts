import assert from "node:assert/strict";
import { junit10Problems } from "../helpers/junit_xsd.ts";
import { dvergrWithPath as dvergr } from "../helpers/cli.ts";
import { wordDataset, writeBundleTo } from "../helpers/dataset_bundle.ts";
import type { Scorecard } from "../../core/bench/scorecard.ts";
import { fileURLToPath } from "node:url";

/** Five invoices; builtin:reference writes each case's expected answer, builtin:noop nothing. */
const INVOICES = fileURLToPath(new URL("../../examples/workflows/invoice-fields", import.meta.url));

Deno.test("dvergr benchmark --stop-when-decided skips the cells it no longer needs and a rerun resumes", async () => {
  const home = await Deno.makeTempDir();
  const junit = `${home}/junit.xml`;
  const args = [
    "benchmark",
    INVOICES,
    "--candidate",
    "builtin:reference",
    "--candidate",
    "builtin:noop",
    "--repetitions",
    "10",
    "--baseline",
    "builtin:noop",
    "--stop-when-decided",
    "--home",
    home,
  ];
  const first = await dvergr([...args, "--junit", junit]);
  assert.equal(first.code, 0, first.err + first.out);
  const stopped =
    /^stopped: builtin:reference decided: higher than builtin:noop after (\d+) of 50 pairs, sequence \+0\.\d\d to \+1\.00$/m
      .exec(first.out);
  assert.ok(stopped, first.out);
  const pairs = Number(stopped[1]);
  assert.ok(pairs < 30, `decided after ${pairs} pairs`);
  const notNeeded = Number(
    /^(\d+) of 100 cells not needed \(alpha 0\.05, delta 0\.02\)$/m.exec(first.out)?.[1],
  );
  assert.ok(notNeeded >= 40, first.out);
  assert.match(first.err, /^stopped: builtin:reference decided: higher than builtin:noop/m);
  assert.match(
    first.out,
    /builtin:reference +reward 1\.000 {2}passed \d+\/\d+ .* not needed \d+ of 50/,
  );
  assert.doesNotMatch(first.out, /did not finish/);
  const report = await Deno.readTextFile(first.out.match(/^Report: (.*)$/m)![1]);
  assert.match(report, /## Sequential stopping/);
  assert.match(
    report,
    new RegExp(`\\| builtin:reference \\| decided: higher \\| ${pairs} of 50 \\|`),
  );
  assert.match(report, new RegExp(`${notNeeded} of 100 cells were not needed`));
  // JUnit: the skipped cells are skipped as not needed, not errors.
  const xml = await Deno.readTextFile(junit);
  assert.match(xml, /errors="0"/);
  assert.deepEqual(junit10Problems(xml), []);
  assert.equal(xml.match(/not needed: the comparison stopped when decided/g)?.length, notNeeded);

  // The rerun finds the same decision from the records and runs no cell.
  const again = await dvergr([...args, "--json"]);
  assert.equal(again.code, 0, again.err);
  assert.match(
    again.err,
    new RegExp(`100 cells, ${100 - notNeeded} kept from earlier runs, ${notNeeded} not needed`),
  );
  const card = JSON.parse(again.out).scorecard as Scorecard;
  assert.equal(card.complete, true);
  assert.equal(card.gradedCells, 100 - notNeeded);
  assert.equal(card.sequential!.notNeeded, notNeeded);
  assert.equal(card.sequential!.comparisons[0].pairs, pairs);
  assert.equal(card.sequential!.comparisons[0].status, "decided");

  // Without --stop-when-decided the same experiment runs only the cells not needed.
  const full = await dvergr(args.filter((a) => a !== "--stop-when-decided"));
  assert.equal(full.code, 0, full.err);
  assert.match(full.err, new RegExp(`100 cells, ${100 - notNeeded} kept from earlier runs\\n`));
  assert.doesNotMatch(full.out, /not needed/);
  await Deno.remove(home, { recursive: true });
});

Deno.test("dvergr benchmark refuses --stop-when-decided without a baseline, and --delta or --alpha out of place", async () => {
  const dir = await writeBundleTo(wordDataset(2));
  const home = await Deno.makeTempDir();
  const base = [
    "benchmark",
    dir,
    "--candidate",
    "builtin:noop",
    "--candidate",
    "builtin:reference",
    "--home",
    home,
  ];
  const noBaseline = await dvergr([...base, "--stop-when-decided"]);
  assert.equal(noBaseline.code, 2);
  assert.match(
    noBaseline.err,
    /Cannot stop when decided without a baseline\nhint: .*--baseline NAME/,
  );
  const loneDelta = await dvergr([...base, "--delta", "0.05"]);
  assert.equal(loneDelta.code, 2);
  assert.match(loneDelta.err, /Cannot use --delta or --alpha without --stop-when-decided/);
  const badAlpha = await dvergr([
    ...base,
    "--baseline",
    "builtin:noop",
    "--stop-when-decided",
    "--alpha",
    "0.9",
  ]);
  assert.equal(badAlpha.code, 2);
  assert.match(badAlpha.err, /Cannot use --alpha "0\.9": expected from 0\.0001 to 0\.5/);
  const one = await dvergr([
    "benchmark",
    dir,
    "--candidate",
    "builtin:noop",
    "--baseline",
    "builtin:noop",
    "--stop-when-decided",
    "--home",
    home,
  ]);
  assert.equal(one.code, 2);
  assert.match(one.err, /Cannot stop when decided with one candidate/);
  await Deno.remove(home, { recursive: true });
});
