/**
 * The staging mount point of sandboxed attempts run as root (host_identity.ts): shared by
 * every attempt and every dvergr process, empty on the host (each attempt's staging lives in
 * its own mount namespace), so a killed dvergr leaves nothing behind; one a temp cleaner
 * removed is made again at the next attempt.
 *
 * These tests stage under a temp dir of their own (the TMPDIR of the candidate's environment,
 * not the process's, which the test modules running beside share): removing the shared mount point
 * while another dvergr process stages on it (another test file, a bench) would detach that
 * attempt's staging mounts, and its X-mount.mkdir directories would land on the host.
 */
import assert from "node:assert/strict";
import { commandCandidate, detectBwrap } from "../../../../adapters/candidates/command/command.ts";
import { stageDir } from "../../../../adapters/candidates/command/host_identity.ts";
import { attemptInWorld } from "../../../helpers/attempt_world.ts";

const env = (k: string) => Deno.env.get(k);
const isRoot = Deno.uid() === 0;
const hasBwrap = await detectBwrap(env);
const ignore = !isRoot || !hasBwrap;
const why = ignore ? ` [skipped: ${isRoot ? "no bubblewrap" : "not root: no staging"}]` : "";

/** A sandboxed attempt that writes its answer: its outcome's status and message. */
async function attempt(tmpEnv: typeof env): Promise<string> {
  const { world, ctx } = await attemptInWorld("t", 20_000);
  try {
    const outcome = await commandCandidate({ name: "t", command: "cat /docs/a.md > /out/a" }, {
      isolation: "bwrap",
      env: tmpEnv,
    }).run(ctx);
    const captured = await world.capture(["/out"]);
    assert.equal(captured.files["/out/a"], outcome.status === "completed" ? "hello" : undefined);
    return `${outcome.status}${outcome.message ? `: ${outcome.message}` : ""}`;
  } finally {
    await world.remove();
  }
}

/** What the host's mount table has on `dir` or under it. */
async function mountsUnder(dir: string): Promise<string[]> {
  const out = await new Deno.Command("cat", { args: ["/proc/self/mountinfo"] }).output();
  return new TextDecoder().decode(out.stdout).split("\n")
    .filter((l) => l.split(" ")[4]?.startsWith(dir));
}

/** Runs `fn` with an environment whose TMPDIR is a fresh directory of its own, removed after. */
async function inOwnTmp(fn: (tmpEnv: typeof env) => Promise<void>): Promise<void> {
  const tmp = await Deno.makeTempDir({ prefix: "dvergr-stage-test-" });
  await Deno.chmod(tmp, 0o755);
  try {
    await fn((k) => k === "TMPDIR" ? tmp : env(k));
  } finally {
    await Deno.remove(tmp, { recursive: true });
  }
}

Deno.test({
  name: `stageDir() as root: attempts leave the mount point empty, no mount on the host${why}`,
  ignore,
  fn: () =>
    inOwnTmp(async (tmpEnv) => {
      assert.equal(await attempt(tmpEnv), "completed");
      const dir = await stageDir(tmpEnv);
      assert.deepEqual([...Deno.readDirSync(dir)], []);
      assert.deepEqual(await mountsUnder(dir), []);
      // Several at once: each stages in its own namespace on the same mount point.
      assert.deepEqual(await Promise.all([attempt(tmpEnv), attempt(tmpEnv), attempt(tmpEnv)]), [
        "completed",
        "completed",
        "completed",
      ]);
      assert.deepEqual([...Deno.readDirSync(dir)], []);
      assert.deepEqual(await mountsUnder(dir), []);
    }),
});

Deno.test({
  name: `stageDir() as root: a mount point a temp cleaner removed is made again${why}`,
  ignore,
  fn: () =>
    inOwnTmp(async (tmpEnv) => {
      const dir = await stageDir(tmpEnv);
      await Deno.remove(dir);
      // Every later attempt starts.
      assert.equal(await attempt(tmpEnv), "completed");
      assert.equal(await attempt(tmpEnv), "completed");
      assert.ok((await Deno.lstat(dir)).isDirectory);
    }),
});
