/**
 * A sandboxed command candidate's time limit is kept by the host: it signals the supervisor,
 * the sandbox's init, at go + the limit and at the grace's end, and with a cgroup also kills the
 * candidate's own cgroup, which it cannot leave, at the grace's end. The sandbox keeps no timer
 * of the candidate's uid: before, the supervisor's `sleep` was one, and a candidate that stopped
 * it (SIGSTOP) ran on until the host's backstop (the grace and the 30 s the supervisor has to
 * pack), and passed when it ended before that. Stopping or killing the supervisor gains it
 * nothing either (the kernel drops those signals from inside the namespace).
 *
 * Needs bubblewrap, and for the cgroup's tests an attempt cgroup (root, or a delegated
 * cgroup): skipped, with the reason said, where either is missing.
 */
import assert from "node:assert/strict";
import {
  commandCandidate,
  detectBwrap,
  type GatewayFactory,
} from "../../../../adapters/candidates/command/command.ts";
import { commandGateway } from "../../../../adapters/gateway/command_gateway.ts";
import { openAttemptCgroup } from "../../../../adapters/candidates/command/cgroup.ts";
import { DEFAULT_LIMITS } from "../../../../adapters/candidates/command/limits.ts";
import { attemptInWorld } from "../../../helpers/attempt_world.ts";
import { descendants, gone } from "../../../helpers/processes.ts";

const env = (k: string) => Deno.env.get(k);
/** The host as one without cgroups for dvergr (a container's read-only /sys/fs/cgroup, say). */
const noCgroup = (k: string) => k === "DVERGR_CGROUP" ? "none" : env(k);
const hasBwrap = await detectBwrap(env);
const probe = await openAttemptCgroup(16 << 20, 8, env);
await probe?.close();
const hasCgroup = probe !== null;
/** Why these tests cannot run here (said in their names), or null. */
const skipped = !hasBwrap
  ? "no bubblewrap"
  : !hasCgroup
  ? "no attempt cgroup on this host (not root, no delegated cgroup v2)"
  : null;
const skippedWithout = !hasBwrap ? "no bubblewrap" : null;

/** Runs `command` sandboxed with a time limit of `timeoutMs`; the outcome and what came back. */
async function attempt(
  command: string,
  timeoutMs: number,
  gateway?: GatewayFactory,
  hostEnv = env,
) {
  const { world, ctx } = await attemptInWorld("stretch", timeoutMs);
  const cand = commandCandidate({ name: "stretch", command }, {
    isolation: "bwrap",
    env: hostEnv,
    killGraceMs: 200,
    limits: DEFAULT_LIMITS,
    gateway,
  });
  try {
    const outcome = await cand.run(ctx);
    const captured = await world.capture(["/out"]);
    return { outcome, captured };
  } finally {
    await world.remove();
  }
}

/**
 * The supervisor: the oldest shell its command line names (its forks share it until they exec,
 * bwrap's names it too; the brackets keep the candidate's own shell out).
 */
const SUPERVISOR = `$(pgrep -o -f '^[^ ]*sh -c .*dvergr-[s]upervisor')`;
/** A pack that says the candidate ended well in time, with its answer (then it kills the supervisor). */
const FORGE = "cd /tmp && mkdir -p .dvergr/run out && " +
  "printf 'exit=0\\ntimedout=0\\nfull=\\n' > .dvergr/run/status && echo late > out/answer.txt && " +
  "tar --format=posix -cf /.dvergr/capture.tar .dvergr/run/status out/answer.txt && " +
  `kill -9 ${SUPERVISOR}`;

const ignore = skipped !== null;
const why = skipped ? ` [skipped: ${skipped}]` : "";

Deno.test({
  name:
    "commandCandidate() [bwrap] runs in a cgroup of its own, which no process of the sandbox can write or leave" +
    why,
  ignore,
  async fn() {
    // The cgroup namespace's root is the attempt's cgroup: the candidate sees its own below it.
    const { outcome, captured } = await attempt(
      "grep -E '^[0-9]+:(pids)?:' /proc/self/cgroup | sed 's/^[0-9]*:[a-z]*://' > /out/cgroup; " +
        // Every process whose memory it can open (and so write code into) is in its cgroup.
        "for p in /proc/[0-9]*; do if ( exec 5<$p/mem ) 2>/dev/null && " +
        "! grep -qE '^[0-9]+:(pids)?:/candidate$' $p/cgroup 2>/dev/null; then " +
        'echo "${p#/proc/} $(cat $p/comm)"; fi; done > /out/writable; ' +
        // The supervisor keeps it, its descriptors out of reach; any other process closes it
        // before it execs (a moment after the candidate starts).
        "for i in $(seq 100); do n=$(ls -l /proc/[0-9]*/fd/ 2>/dev/null | grep -c cgroup); " +
        '[ "$n" = 0 ] && break; sleep 0.1; done; echo "$n" > /out/fds; ' +
        "ls /sys/fs/cgroup > /out/sys 2>&1 || echo none >> /out/sys",
      20_000,
      // With the world gateway's forwarder beside it.
      commandGateway({ env }),
    );
    assert.equal(outcome.status, "completed", outcome.message ?? "");
    assert.match(captured.files["/out/cgroup"] ?? "", /^\/candidate$/m);
    assert.equal(captured.files["/out/fds"], "0\n", "a process of the sandbox holds a cgroup file");
    assert.match(captured.files["/out/sys"] ?? "", /none\n$/);
    assert.equal(captured.files["/out/writable"], "", "processes outside its cgroup it can write");
  },
});

const whyWithout = skippedWithout ? ` [skipped: ${skippedWithout}]` : "";

for (const [label, hostEnv] of [["without a cgroup", noCgroup], ["with a cgroup", env]] as const) {
  const ignoreHere = label === "without a cgroup" ? skippedWithout !== null : ignore;
  const whyHere = label === "without a cgroup" ? whyWithout : why;
  const run = (command: string, timeoutMs: number) =>
    attempt(command, timeoutMs, undefined, hostEnv);

  Deno.test({
    name: `commandCandidate() [bwrap] ${label} that runs on past its limit is timed out at it` +
      whyHere,
    ignore: ignoreHere,
    async fn() {
      const { outcome, captured } = await run("sleep 10; echo late > /out/answer.txt", 2000);
      assert.equal(outcome.status, "timeout", outcome.message ?? "");
      assert.equal(outcome.message, "Stopped after 2000 ms");
      assert.equal(outcome.evidence.timedOut, true);
      assert.equal(captured.files["/out/answer.txt"], undefined);
      const limits = outcome.evidence.limits as { enforcedBy: { time: string } };
      assert.match(limits.enforcedBy.time, /^host \(/);
    },
  });

  Deno.test({
    name:
      `commandCandidate() [bwrap] ${label} that stops its supervisor, runs on and forges its pack is timed out` +
      whyHere,
    ignore: ignoreHere,
    async fn() {
      const { outcome } = await run(`kill -STOP ${SUPERVISOR}; sleep 10; ${FORGE}`, 2000);
      assert.equal(outcome.status, "timeout", outcome.message ?? "");
      assert.equal(outcome.evidence.timedOut, true);
    },
  });

  Deno.test({
    name: `commandCandidate() [bwrap] ${label} that ends within its limit passes` + whyHere,
    ignore: ignoreHere,
    async fn() {
      const { outcome, captured } = await run("echo in-time > /out/answer.txt", 20_000);
      assert.equal(outcome.status, "completed", outcome.message ?? "");
      assert.equal(captured.files["/out/answer.txt"], "in-time\n");
    },
  });

  Deno.test({
    name:
      `commandCandidate() [bwrap] ${label} stopped by the host mid-run leaves no process of its sandbox` +
      whyHere,
    ignore: ignoreHere,
    async fn() {
      // The host kills the launch (bwrap, and its process group); the sandbox's init dies with
      // bwrap (--die-with-parent), and the PID namespace with the init.
      const { world, ctx } = await attemptInWorld("stopped", 600_000);
      const stop = new AbortController();
      const marker = `sleep 987.${Math.floor(Math.random() * 1000)}`;
      const cand = commandCandidate({ name: "stopped", command: `${marker}; echo late` }, {
        isolation: "bwrap",
        env: hostEnv,
        killGraceMs: 200,
        limits: DEFAULT_LIMITS,
      });
      try {
        const running = cand.run({ ...ctx, signal: stop.signal });
        let ours = descendants(Deno.pid);
        while (!ours.some((p) => p.cmd.includes(marker))) {
          await new Promise((r) => setTimeout(r, 50));
          ours = descendants(Deno.pid);
        }
        const sandbox = ours.filter((p) => /bwrap|dvergr-supervisor|sleep 987/.test(p.cmd));
        stop.abort();
        const outcome = await running;
        assert.notEqual(outcome.status, "completed");
        assert.deepEqual(await gone(sandbox, 30_000), [], "processes of the sandbox left");
      } finally {
        await world.remove();
      }
    },
  });

  Deno.test({
    name:
      `commandCandidate() [bwrap] ${label} deaf to SIGTERM ends at the grace, not the backstop` +
      whyHere,
    ignore: ignoreHere,
    async fn() {
      // The host's backstop would end it 30 s after the limit and grace; the host's second
      // signal ends the supervisor's wait for the candidate at the grace's end.
      const start = performance.now();
      const { outcome, captured } = await run(
        "trap '' TERM; sleep 60; echo late > /out/answer.txt",
        1500,
      );
      const took = performance.now() - start;
      assert.equal(outcome.status, "timeout", outcome.message ?? "");
      assert.equal(captured.files["/out/answer.txt"], undefined);
      assert.ok(took < 20_000, `the sandbox ended ${Math.round(took)} ms after its start`);
    },
  });
}
