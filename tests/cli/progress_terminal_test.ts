/**
 * Progress goes to stderr, so whether it draws a bar is stderr's terminal, not stdout's:
 * run under a real pseudo-terminal (util-linux `script`) with one of the two redirected.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { DVERGR_RUN_FLAGS } from "../../core/permissions.ts";
import { wordDataset, writeBundleTo } from "../helpers/dataset_bundle.ts";

const MAIN = fileURLToPath(new URL("../../main.ts", import.meta.url));

function quote(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}

/** Runs `shell` (a command line) with a pseudo-terminal as its stdin, stdout and stderr. */
async function underTerminal(shell: string): Promise<string> {
  const out = await new Deno.Command("script", {
    args: ["-qec", shell, "/dev/null"],
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  assert.equal(out.code, 0, new TextDecoder().decode(out.stderr));
  return new TextDecoder().decode(out.stdout);
}

Deno.test("dvergr benchmark draws its progress bar when stderr is a terminal, whatever stdout is", async () => {
  const dir = await writeBundleTo(wordDataset(2));
  const tmp = await Deno.makeTempDir();
  const run = (home: string) =>
    [Deno.execPath(), "run", ...DVERGR_RUN_FLAGS, MAIN, "benchmark", dir]
      .concat(["--candidate", "builtin:reference", "--home", join(tmp, home)])
      .map(quote).join(" ");

  // stdout to a file, stderr the terminal: the bar, redrawn in place.
  const barred = await underTerminal(`${run("a")} > ${quote(join(tmp, "out-a"))}`);
  assert.match(barred, /\r\[#+·*\] \d\/2 cells · 0 faults/);
  assert.ok(barred.includes("\x1b[K"), "the bar clears the rest of its line");
  assert.match(await Deno.readTextFile(join(tmp, "out-a")), /^builtin:reference +reward/m);

  // stdout the terminal, stderr to a file: plain lines, no terminal controls.
  const shown = await underTerminal(`${run("b")} 2> ${quote(join(tmp, "err-b"))}`);
  assert.match(shown, /builtin:reference +reward/);
  const err = await Deno.readTextFile(join(tmp, "err-b"));
  assert.match(err, /^progress: 2\/2 cells · 0 faults/m);
  assert.ok(!err.includes("\r") && !err.includes("\x1b"), JSON.stringify(err));
});
