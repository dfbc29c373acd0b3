/**
 * The staging directories of dvergr processes run as root (host_identity.ts): a killed
 * process's is removed by the next one that stages, never a live one's, and a live process
 * whose directory a temp cleaner removed makes a new one instead of failing every later
 * attempt.
 */
import assert from "node:assert/strict";
import { dirname } from "node:path";
import { commandCandidate, detectBwrap } from "../../../../adapters/candidates/command/command.ts";
import * as first from "../../../../adapters/candidates/command/host_identity.ts";
import { createWorld } from "../../../../adapters/world/world.ts";
import type { AttemptContext } from "../../../../core/bench/candidate.ts";

const env = (k: string) => Deno.env.get(k);
const isRoot = Deno.uid() === 0;
const hasBwrap = await detectBwrap(env);
const ignore = !isRoot || !hasBwrap;
const why = ignore ? ` [skipped: ${isRoot ? "no bubblewrap" : "not root: no staging"}]` : "";

/** A sandboxed attempt that writes its answer: its outcome's status and message. */
async function attempt(): Promise<string> {
  const world = await createWorld({ "/docs/a.md": "hello" }, { mkdirs: ["/out"] });
  const ctx: AttemptContext = {
    task: "t",
    caseId: null,
    repetition: 0,
    world: world.files,
    worldDir: world.dir,
    reference: null,
    timeoutMs: 20_000,
    budgetMicros: 0,
    profile: "developer",
    writable: ["/out"],
    signal: new AbortController().signal,
  };
  try {
    const outcome = await commandCandidate({ name: "t", command: "cat /docs/a.md > /out/a" }, {
      isolation: "bwrap",
      env,
    }).run(ctx);
    const captured = await world.capture(["/out"]);
    assert.equal(captured.files["/out/a"], outcome.status === "completed" ? "hello" : undefined);
    return `${outcome.status}${outcome.message ? `: ${outcome.message}` : ""}`;
  } finally {
    await world.remove();
  }
}

/** The start time of process `pid` (field 22 of /proc/PID/stat), read by a shell. */
async function startTime(pid: number): Promise<string> {
  const out = await new Deno.Command("/bin/sh", {
    args: [
      "-c",
      'read -r s < "/proc/$1/stat"; s=${s##*) }; set -- $s; echo "${20}"',
      "t",
      `${pid}`,
    ],
  }).output();
  return new TextDecoder().decode(out.stdout).trim();
}

async function exists(path: string): Promise<boolean> {
  return await Deno.stat(path).then(() => true, () => false);
}

Deno.test({
  name: `openStage() as root: a staging directory a temp cleaner removed is made again${why}`,
  ignore,
  async fn() {
    assert.equal(await attempt(), "completed");
    const stage = await first.openStage();
    const root = dirname(stage.dir);
    await stage.close();
    // Named for this process (its pid and start time), which is what the next one checks.
    assert.match(root, new RegExp(`/dvergr-stage-${Deno.pid}-${await startTime(Deno.pid)}-[^/]+$`));
    await Deno.remove(root);
    // Every later attempt starts, in a new staging directory.
    assert.equal(await attempt(), "completed");
    assert.equal(await attempt(), "completed");
    const again = await first.openStage();
    await again.close();
    assert.notEqual(dirname(again.dir), root);
    assert.ok(await exists(dirname(again.dir)));
  },
});

Deno.test({
  name:
    `openStage() as root removes the staging directories of dvergr processes that are gone, never a live one's${why}`,
  ignore,
  async fn() {
    const mine = await first.openStage();
    await mine.close();
    const tmp = dirname(dirname(mine.dir));
    const ended = new Deno.Command("true").spawn();
    await ended.status;
    const live = new Deno.Command("sleep", { args: ["60"] }).spawn();
    const dirs = {
      // A pid that no longer runs, and a pid that runs but started at another time (reused).
      gone: `${tmp}/dvergr-stage-${ended.pid}-12345-test${crypto.randomUUID().slice(0, 6)}`,
      reused: `${tmp}/dvergr-stage-${live.pid}-1-test${crypto.randomUUID().slice(0, 6)}`,
      live: `${tmp}/dvergr-stage-${live.pid}-${await startTime(live.pid)}-test${
        crypto.randomUUID().slice(0, 6)
      }`,
      // No pid in its name (another program's, or an older dvergr's): left alone.
      unnamed: `${tmp}/dvergr-stage-test${crypto.randomUUID().slice(0, 6)}`,
    };
    try {
      for (const d of Object.values(dirs)) await Deno.mkdir(d);
      // Another module instance of this process stages first, as a new dvergr process would.
      const url = new URL(
        "../../../../adapters/candidates/command/host_identity.ts",
        import.meta.url,
      );
      const second: typeof first = await import(`${url.href}?sweep`);
      const theirs = await second.openStage();
      await theirs.close();
      assert.equal(await exists(dirs.gone), false, "a gone process's directory stayed");
      assert.equal(await exists(dirs.reused), false, "a reused pid's directory stayed");
      assert.equal(await exists(dirs.live), true, "a live process's directory was removed");
      assert.equal(await exists(dirs.unnamed), true);
      // This process's own staging, live, still serves its attempts.
      assert.ok(await exists(dirname(mine.dir)));
      assert.equal(await attempt(), "completed");
    } finally {
      live.kill("SIGKILL");
      await live.status;
      for (const d of Object.values(dirs)) await Deno.remove(d).catch(() => {});
    }
  },
});
