/**
 * `dvergr calibrate` asks the bundle's review about calibration.edn's `:reviews`: the example
 * wiki-keeper calibrates offline (its checks decide its updates); with a reviewer model (a
 * local Anthropic server) and an update only a reader can catch, a reviewer that approves
 * everything is not calibrated (exit 1) and one that reads is.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { readBundleDir, writeTree } from "../../adapters/files/bundle_dir.ts";
import { dvergrWithPath } from "../helpers/cli.ts";
import { WIKI_KEEPER } from "../helpers/wiki_room.ts";
import { type FakeScript, startFakeAnthropic } from "../helpers/fake_providers.ts";

const WRONG =
  '"/wiki/backups.md" "# Backups\\nSource: docs/backups.md\\nBackups are kept for 90 days.\\n"';

/** The example with a reviewer and a wrong-but-well-formed update it must escalate. */
async function withReviewerBundle(): Promise<string> {
  const b = await readBundleDir(WIKI_KEEPER);
  const files = new Map(b.files);
  files.set(
    "workflow.edn",
    files.get("workflow.edn")!.replace(
      ":on-pass :merge",
      ':reviewer {:model "haiku" :instructions "Escalate a summary that says what its document does not."}\n          :on-pass :merge',
    ),
  );
  const cal = files.get("calibration.edn")!;
  const good = /:good-update \{:files \{([\s\S]*?)\}\s*:expect :approve\}/.exec(cal)![1];
  files.set(
    "calibration.edn",
    cal.replace(
      ":reviews {",
      `:reviews {:wrong-summary {:files {${
        good.replace(/"\/wiki\/backups.md" "[^"]*"/, WRONG)
      }} :expect :escalate}\n           `,
    ),
  );
  const dir = join(await Deno.makeTempDir(), "wiki-keeper");
  await writeTree(dir, files);
  return dir;
}

Deno.test("dvergr calibrate: the wiki-keeper's review decides its updates as calibration.edn expects", async () => {
  const r = await dvergrWithPath(["calibrate", WIKI_KEEPER]);
  assert.equal(r.code, 0, r.out + r.err);
  assert.match(r.out, /^ {2}ok {2}review docs-tampered {4}escalate \(expected escalate\)$/m);
  assert.match(r.out, /the review decides 3 updates as expected$/m);
});

Deno.test("dvergr calibrate fails a reviewer that approves everything, passes one that reads", async () => {
  const dir = await withReviewerBundle();
  let asked = 0;
  let reads = false;
  const script: FakeScript = (t) => {
    asked++;
    const m = (t.body.messages as { content: string | { text: string }[] }[])[0].content;
    const prompt = typeof m === "string" ? m : m.map((c) => c.text).join("");
    const wrong = reads && prompt.includes("90 days");
    return {
      text: wrong
        ? '{:review/verdict :escalate :review/reasons [] :review/concerns ["the document says 30 days"]}'
        : '{:review/verdict :approve :review/reasons ["fine"] :review/concerns []}',
    };
  };
  const server = await startFakeAnthropic(script, { apiKey: "ak" });
  try {
    const env = { ANTHROPIC_API_KEY: "ak", ANTHROPIC_BASE_URL: server.url };
    const lax = await dvergrWithPath(["calibrate", dir], env);
    assert.equal(lax.code, 1, lax.out + lax.err);
    assert.match(lax.out, /BAD review wrong-summary {4}approve \(expected escalate\)/);
    assert.match(lax.out, /- review wrong-summary: expected :escalate, the review would approve/);
    // The checks decide the damaged updates: the reviewer is asked only about the other two.
    assert.equal(asked, 2);
    reads = true;
    const strict = await dvergrWithPath(["calibrate", dir], env);
    assert.equal(strict.code, 0, strict.out + strict.err);
    assert.match(
      strict.out,
      /ok {2}review wrong-summary {4}escalate \(expected escalate\) {2}reviewer: escalate/,
    );
  } finally {
    await server.close();
  }
});
