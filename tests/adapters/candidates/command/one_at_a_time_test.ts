/**
 * Without a cgroup per attempt (dvergr run by a normal user on cgroup v1, or DVERGR_CGROUP=none)
 * RLIMIT_NPROC, which counts every process of the user, is a command candidate's only process
 * limit: sandboxed attempts then run one at a time, so one candidate's forks cannot fail
 * another's attempts. (Attempts on the host's network are not held otherwise: each reaches
 * its gateway behind a secret of its own, network_gateway_test.ts runs two side by side.)
 */
import assert from "node:assert/strict";
import { DVERGR_PERMISSIONS } from "../../../../core/permissions.ts";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { detectBwrap } from "../../../../adapters/candidates/command/command.ts";
import { Gate, serialNote } from "../../../../adapters/candidates/command/gate.ts";
import { wordDataset, writeBundleTo } from "../../../helpers/dataset_bundle.ts";

const env = (k: string) => Deno.env.get(k);
const hasBwrap = await detectBwrap(env);
const isRoot = Deno.uid() === 0;
const hasSetpriv = await new Deno.Command("setpriv", { args: ["--version"] }).output()
  .then((o) => o.success, () => false);
const repo = join(dirname(fileURLToPath(import.meta.url)), "../../../..");
const NOBODY = 65534;

Deno.test("Gate admits one holder at a time, in order, and lets an aborted waiter go", async () => {
  const gate = new Gate();
  const order: string[] = [];
  const first = await gate.enter(new AbortController().signal);
  assert(first);
  const second = gate.enter(new AbortController().signal).then((r) => {
    order.push("second");
    return r;
  });
  const leaving = new AbortController();
  const third = gate.enter(leaving.signal);
  const fourth = gate.enter(new AbortController().signal).then((r) => {
    order.push("fourth");
    return r;
  });
  await new Promise((r) => setTimeout(r, 10));
  assert.deepEqual(order, []);
  assert.equal(gate.waiting, 3);
  leaving.abort();
  assert.equal(await third, null);
  assert.equal(gate.waiting, 2);
  first();
  first(); // A second release gives nothing back twice.
  const secondRelease = await second;
  assert(secondRelease);
  await new Promise((r) => setTimeout(r, 10));
  assert.deepEqual(order, ["second"]);
  secondRelease();
  const fourthRelease = await fourth;
  assert.deepEqual(order, ["second", "fourth"]);
  assert(fourthRelease);
  fourthRelease();
  // Free again, and an aborted signal never takes it.
  const aborted = new AbortController();
  aborted.abort();
  assert.equal(await gate.enter(aborted.signal), null);
  const again = await gate.enter(new AbortController().signal);
  assert(again);
  again();
});

Deno.test("serialNote() says why attempts run one at a time and what lifts it", () => {
  const off = serialNote((k) => k === "DVERGR_CGROUP" ? "none" : undefined);
  assert.match(off, /one attempt at a time, whatever --parallel says: DVERGR_CGROUP=none/);
  assert.match(off, /RLIMIT_NPROC/);
  assert.match(off, /run dvergr as root/);
  assert.match(serialNote(() => undefined), /this host gives dvergr no cgroup/);
});

/** The repository as `nobody` can read it: itself, or a copy of what dvergr imports. */
async function readableRepo(tmp: string): Promise<string> {
  const probe = await new Deno.Command("setpriv", {
    args: [`--reuid=${NOBODY}`, `--regid=${NOBODY}`, "--clear-groups", "test", "-r"].concat(
      join(repo, "main.ts"),
    ),
  }).output();
  if (probe.success) return repo;
  const copy = join(tmp, "repo");
  await Deno.mkdir(copy);
  const parts = ["main.ts", "cli", "core", "adapters", "sandbox", "mcp", "view", "schemas"];
  for (const part of [...parts, "deno.json", "deno.lock", "package.json", "node_modules"]) {
    const out = await new Deno.Command("cp", {
      args: ["-a", join(repo, part), join(copy, part)],
    }).output();
    assert(out.success, new TextDecoder().decode(out.stderr));
  }
  await new Deno.Command("chmod", { args: ["-R", "a+rX", copy] }).output();
  return copy;
}

Deno.test({
  name:
    "dvergr benchmark as a normal user: a fork bomb beside an honest candidate changes nothing of its outcome",
  // A normal user gets no cgroup here only where the test can become one (root with setpriv).
  ignore: !hasBwrap || !isRoot || !hasSetpriv,
  async fn() {
    const tmp = await Deno.makeTempDir({ prefix: "dvergr-nproc-" });
    try {
      await Deno.chmod(tmp, 0o755);
      const dir = await readableRepo(tmp);
      const bundle = await writeBundleTo(wordDataset(2));
      const home = join(tmp, "home");
      const denoDir = join(tmp, "deno-dir");
      for (const d of [home, denoDir]) {
        await Deno.mkdir(d);
        await Deno.chown(d, NOBODY, NOBODY);
      }
      await new Deno.Command("chmod", { args: ["-R", "a+rX", dirname(bundle)] }).output();
      // Every shell of the bomb forks two more and waits for them (no exec, so forks are
      // quick): the user's RLIMIT_NPROC is reached within a second or two and stays reached
      // while the bomb's first shell tries to fork `sleep 1` (after which its sandbox ends).
      // The honest candidate forks `sleep` four times and `cat` over two seconds, meanwhile
      // but for the gate. Two cases: four cells, all at once under --parallel 4.
      const bomb = "bomb=cmd:f() { f & f & wait; }; f & until sleep 1; do :; done";
      const honest =
        "honest=cmd:for i in 1 2 3 4; do sleep 0.5; done; cat docs/q.txt > out/answer.txt";
      const out = await new Deno.Command("setpriv", {
        args: [
          `--reuid=${NOBODY}`,
          `--regid=${NOBODY}`,
          "--clear-groups",
          Deno.execPath(),
          "run",
          "--cached-only",
          ...DVERGR_PERMISSIONS,
          join(dir, "main.ts"),
          "benchmark",
          bundle,
          "--candidate",
          bomb,
          "--candidate",
          honest,
          "--parallel",
          "4",
          "--home",
          home,
          "--json",
        ],
        cwd: tmp,
        clearEnv: true,
        env: { PATH: env("PATH") ?? "/usr/bin:/bin", DENO_DIR: denoDir, HOME: home, TMPDIR: home },
        stdout: "piped",
        stderr: "piped",
      }).output();
      const stderr = new TextDecoder().decode(out.stderr);
      const stdout = new TextDecoder().decode(out.stdout);
      const card = JSON.parse(stdout).scorecard;
      const c = card.candidates.find((x: { candidate: string }) => x.candidate === "honest");
      assert(c, stdout);
      assert.equal(c.passes, 2, `${JSON.stringify(c.outcomes)}\n${stderr}`);
      assert.equal(c.faults, 0, stdout);
      assert.equal(c.cost.retriedTries, 0, stdout);
      assert.match(stderr, /run one attempt at a time, whatever --parallel says/, stderr);
      assert.equal(stderr.match(/one attempt at a time/g)?.length, 1, stderr);
    } finally {
      await Deno.remove(tmp, { recursive: true });
    }
  },
});
