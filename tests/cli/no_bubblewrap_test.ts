/**
 * What `dvergr benchmark --help` says happens without bubblewrap, on a PATH that has none:
 * command candidates are refused before any cell (exit 2) unless DVERGR_ISOLATION=none,
 * which runs them unisolated with a report that says so; built-in candidates run anyway.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { DVERGR_RUN_FLAGS } from "../../core/permissions.ts";
import { HELP } from "../../cli/benchmark.ts";
import { UNISOLATED_NOTE } from "../../core/bench/report_options.ts";
import { wordDataset, writeBundleTo } from "../helpers/dataset_bundle.ts";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));

/** A directory of every program of /usr/bin and /bin but bwrap. */
async function pathWithoutBwrap(): Promise<string> {
  const bin = await Deno.makeTempDir({ prefix: "dvergr-nobwrap-" });
  for (const dir of ["/usr/bin", "/bin", "/usr/sbin", "/sbin"]) {
    try {
      for await (const e of Deno.readDir(dir)) {
        if (e.name === "bwrap") continue;
        await Deno.symlink(join(dir, e.name), join(bin, e.name)).catch(() => {});
      }
    } catch {
      // No such directory here.
    }
  }
  return bin;
}

async function benchmark(env: Record<string, string>, ...args: string[]) {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", ...DVERGR_RUN_FLAGS, `${ROOT}main.ts`, "benchmark", ...args],
    env,
    clearEnv: true,
    stdout: "piped",
    stderr: "piped",
  }).output();
  const dec = new TextDecoder();
  return { code: out.code, out: dec.decode(out.stdout), err: dec.decode(out.stderr) };
}

Deno.test("dvergr benchmark without bubblewrap does what its --help says", async () => {
  assert.match(
    HELP,
    /Without bubblewrap .* stops before any cell with exit 2, unless\s+DVERGR_ISOLATION=none/s,
  );
  const dir = await writeBundleTo(wordDataset(1));
  const home = await Deno.makeTempDir();
  const env = { PATH: await pathWithoutBwrap(), HOME: Deno.env.get("HOME") ?? "/tmp" };
  const agent = "a=cmd:cat docs/q.txt > out/answer.txt";

  const refused = await benchmark(env, dir, "--candidate", agent, "--home", home);
  assert.equal(refused.code, 2, refused.out + refused.err);
  assert.match(
    refused.err,
    /^error\[CANDIDATE_INVALID\]: Cannot run command candidates isolated: /m,
  );
  assert.match(refused.err, /DVERGR_ISOLATION=none/);
  assert.doesNotMatch(refused.err, /Experiment /);

  const builtin = await benchmark(env, dir, "--candidate", "builtin:reference", "--home", home);
  assert.equal(builtin.code, 0, builtin.out + builtin.err);

  const unisolated = await benchmark(
    { ...env, DVERGR_ISOLATION: "none" },
    dir,
    "--candidate",
    agent,
    "--home",
    home,
  );
  assert.equal(unisolated.code, 0, unisolated.out + unisolated.err);
  assert.match(unisolated.out, /^a +reward 1\.000 {2}passed 1\/1 /m);
  const report = await Deno.readTextFile(unisolated.out.match(/^Report: (.*)$/m)![1]);
  assert.match(report, /Not every attempt ran isolated/);
  assert.ok(report.includes(UNISOLATED_NOTE), report);
});
