/**
 * What a candidate or a bundle wrote reaches the terminal shown, never obeyed: ESC, CR, BEL,
 * backspace, C1 controls and bidi overrides in check names, stderr tails, causes and
 * progress lines are printed as escapes, by the real process and in-process alike.
 */
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { join } from "node:path";
import { memoryContext } from "../../cli/context.ts";
import { DVERGR_RUN_FLAGS } from "../../core/permissions.ts";
import { dvergrWithPath, tempDirWith } from "../helpers/cli.ts";
import { wordDataset, writeBundleTo } from "../helpers/dataset_bundle.ts";

const MAIN = fileURLToPath(new URL("../../main.ts", import.meta.url));
/** A character a terminal would obey (tab and newline are text). */
// deno-lint-ignore no-control-regex -- the characters looked for
const CONTROL = /[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]/;
const HOSTILE = "\x1b]0;owned\x07\x1b[2J\rname\b\u202eok\u009b";
const SHOWN = "\\u001b]0;owned\\u0007\\u001b[2J\\rname\\b\\u202eok\\u009b";

Deno.test("memoryContext() shows control characters as escapes; raw writes go as they are", () => {
  const ctx = memoryContext();
  ctx.stdout(`a ${HOSTILE}\tb\n`);
  ctx.stderr(HOSTILE);
  ctx.raw.stderr("\r\x1b[K");
  assert.deepEqual(ctx.out, [`a ${SHOWN}\tb\n`]);
  assert.deepEqual(ctx.err, [SHOWN, "\r\x1b[K"]);
});

Deno.test("dvergr check prints a checker's hostile check name as escapes (the real process)", async () => {
  const dir = await tempDirWith({
    "b/workflow.edn": '{:title "Evil" :task "Write /out/a.txt."}',
    "b/checker.js": `export function check() {
  return { checks: { ${JSON.stringify(HOSTILE)}: true }, reward: 1 };
}`,
    "b/fixtures/docs/a.txt": "hi",
    "b/calibration.edn": '{:reference {"/out/a.txt" "x"}}',
    "ans/out/a.txt": "x",
  });
  try {
    const out = await new Deno.Command(Deno.execPath(), {
      args: [
        "run",
        ...DVERGR_RUN_FLAGS,
        MAIN,
        "check",
        join(dir, "b"),
        "--answer",
        join(dir, "ans"),
      ],
      stdin: "null",
    }).output();
    const text = new TextDecoder().decode(out.stdout);
    assert.equal(out.code, 0, new TextDecoder().decode(out.stderr));
    assert.ok(text.includes(`    pass  ${SHOWN}\n`), text);
    assert.doesNotMatch(text, CONTROL);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("dvergr benchmark and show print a candidate's hostile stderr and name as escapes", async () => {
  const dir = await writeBundleTo(wordDataset(1));
  const home = await Deno.makeTempDir();
  try {
    // The candidate's name comes from the user; its stderr from the candidate.
    const r = await dvergrWithPath([
      "benchmark",
      dir,
      "--candidate",
      `evil=cmd:printf '\\033]0;owned\\007\\033[2J\\rgone\\342\\200\\256x\\n' >&2; exit 3`,
      "--home",
      home,
    ]);
    assert.equal(r.code, 0, r.err);
    assert.doesNotMatch(r.out + r.err, CONTROL);
    const id = /Experiment ([0-9a-f-]+)/.exec(r.err)![1];
    const show = await dvergrWithPath(["show", `${id}/evil/c1/0`, "--home", home]);
    assert.equal(show.code, 0, show.err);
    assert.match(show.out, /\\u001b\]0;owned\\u0007\\u001b\[2J\\rgone\\u202ex/);
    assert.doesNotMatch(show.out, CONTROL);
    const cells = await dvergrWithPath(["show", id, "--home", home]);
    assert.match(cells.out, /exit status 3: \\u001b\]0;owned/);
    assert.doesNotMatch(cells.out, CONTROL);
  } finally {
    await Deno.remove(home, { recursive: true });
    await Deno.remove(dir, { recursive: true });
  }
});
