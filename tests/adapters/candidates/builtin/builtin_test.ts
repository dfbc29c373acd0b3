import assert from "node:assert/strict";
import {
  builtinCandidate,
  referenceFilesFor,
} from "../../../../adapters/candidates/builtin/builtin.ts";
import { createWorld } from "../../../../adapters/world/world.ts";
import { parseBundle } from "../../../../core/bundle/parse.ts";
import { readEdn } from "../../../../core/edn/read.ts";
import { toPlain } from "../../../../core/edn/plain.ts";
import type { AttemptContext } from "../../../../core/bench/candidate.ts";
import { wordBundle, wordDataset } from "../../../helpers/dataset_bundle.ts";
import { recallBundle } from "../../../helpers/bundles.ts";

function casePackLike() {
  const files = wordDataset(2, {
    "calibration.edn":
      '{:case "c1" :reference {"/out/answer.edn" "{\\"word\\" \\"w1\\"}"} :damaged {}}',
    "cases/c1/gold.edn": '{:expected {"word" "w1"}}',
    "cases/c2/gold.edn": '{:expected {"word" "w2" "n" 2.5 "tags" #{"a"}}}',
  });
  return parseBundle({ name: "pack", files });
}

Deno.test("referenceFilesFor() writes each case's expected answer for a case-pack-shaped dataset", () => {
  const bundle = casePackLike();
  assert.deepEqual(referenceFilesFor(bundle, "c1"), { "/out/answer.edn": '{"word" "w1"}' });
  const c2 = referenceFilesFor(bundle, "c2")!["/out/answer.edn"];
  assert.deepEqual(toPlain(readEdn(c2)), { word: "w2", n: 2.5, tags: ["a"] });
});

Deno.test("referenceFilesFor() writes the calibration reference as it is for other bundles", () => {
  const words = wordBundle(2);
  assert.deepEqual(referenceFilesFor(words, "c2"), { "/out/answer.txt": "w1" });
  const recall = parseBundle({ name: "recall", files: recallBundle() });
  assert.deepEqual(referenceFilesFor(recall, null), { "/out/list.md": "Wato, Dust" });
  const none = parseBundle({ name: "recall", files: recallBundle({ "calibration.edn": null }) });
  assert.equal(referenceFilesFor(none, null), null);
});

async function runIn(candidate: ReturnType<typeof builtinCandidate>, caseId: string | null) {
  const world = await createWorld({}, { mkdirs: ["/out"] });
  const ctx: AttemptContext = {
    task: "t",
    caseId,
    repetition: 0,
    world: world.files,
    worldDir: world.dir,
    reference: null,
    timeoutMs: 1000,
    budgetMicros: 0,
    profile: "developer",
    writable: ["/out"],
    signal: new AbortController().signal,
  };
  const outcome = await candidate.run(ctx);
  const cap = await world.capture(["/out"]);
  await world.remove();
  return { outcome, files: cap.files };
}

Deno.test("builtinCandidate() noop writes nothing and reference writes the reference files", async () => {
  const bundle = casePackLike();
  const noop = await runIn(builtinCandidate("noop", bundle), "c2");
  assert.equal(noop.outcome.status, "completed");
  assert.deepEqual(noop.files, {});
  const ref = await runIn(builtinCandidate("reference", bundle), "c1");
  assert.deepEqual(ref.files, { "/out/answer.edn": '{"word" "w1"}' });
  const none = parseBundle({ name: "recall", files: recallBundle({ "calibration.edn": null }) });
  await assert.rejects(
    () => builtinCandidate("reference", none).preflight!(),
    /has no calibration reference/,
  );
});
