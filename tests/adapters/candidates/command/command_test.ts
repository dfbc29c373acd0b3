import assert from "node:assert/strict";
import {
  commandCandidate,
  detectBwrap,
  type Isolation,
} from "../../../../adapters/candidates/command/command.ts";
import { createWorld } from "../../../../adapters/world/world.ts";
import type { AttemptContext } from "../../../../core/bench/candidate.ts";
import type { DvergrError } from "../../../../core/errors.ts";

const env = (k: string) => Deno.env.get(k);
const hasBwrap = await detectBwrap(env);
const modes: Isolation[] = hasBwrap ? ["bwrap", "none"] : ["none"];

async function attempt(
  command: string,
  isolation: Isolation,
  opts: { timeoutMs?: number; mounts?: string[]; fixtures?: Record<string, string> } = {},
) {
  const world = await createWorld(opts.fixtures ?? { "/docs/a.md": "hello" }, { mkdirs: ["/out"] });
  const ctx: AttemptContext = {
    task: "Copy /docs/a.md to /out/answer.txt in capitals.",
    caseId: "c1",
    repetition: 2,
    world: world.files,
    worldDir: world.dir,
    reference: null,
    timeoutMs: opts.timeoutMs ?? 10_000,
    budgetMicros: 0,
    profile: "developer",
    writable: ["/out"],
    signal: new AbortController().signal,
  };
  const cand = commandCandidate({ name: "t", command, mounts: opts.mounts }, {
    isolation,
    env,
    tailBytes: 1000,
    killGraceMs: 200,
  });
  const started = performance.now();
  const outcome = await cand.run(ctx);
  const ms = performance.now() - started;
  const captured = await world.capture(["/out"]);
  return { outcome, captured, ms, world };
}

for (const mode of modes) {
  Deno.test(`commandCandidate() [${mode}] gives the task on stdin and in the environment`, async () => {
    const { outcome, captured, world } = await attempt(
      'cat > out/stdin.txt; printf "%s|%s|%s" "$DVERGR_CASE" "$DVERGR_REPETITION" "$DVERGR_TASK" > out/env.txt; tr a-z A-Z < docs/a.md > out/answer.txt',
      mode,
    );
    await world.remove();
    assert.deepEqual(outcome.status, "completed");
    assert.deepEqual(outcome.isolated, mode === "bwrap");
    assert.deepEqual(captured.files["/out/answer.txt"], "HELLO");
    assert.deepEqual(
      captured.files["/out/stdin.txt"],
      "Copy /docs/a.md to /out/answer.txt in capitals.",
    );
    assert.deepEqual(
      captured.files["/out/env.txt"],
      "c1|2|Copy /docs/a.md to /out/answer.txt in capitals.",
    );
    assert.deepEqual(outcome.evidence.exitCode, 0);
  });

  Deno.test(`commandCandidate() [${mode}] kills a hanging command and its children at the time limit`, async () => {
    const marker = `dvergr-hang-${crypto.randomUUID()}`;
    const { outcome, ms, world } = await attempt(
      `sh -c 'sleep 30; echo ${marker}' & sleep 30; echo late > out/late.txt`,
      mode,
      { timeoutMs: 300 },
    );
    await world.remove();
    assert.deepEqual(outcome.status, "timeout");
    assert(ms < 5000, `took ${ms} ms`);
    const ps = new TextDecoder().decode(
      (await new Deno.Command("ps", { args: ["-eo", "args"] }).output()).stdout,
    );
    assert(!ps.includes(marker), "a child of the command survived");
  });

  Deno.test(`commandCandidate() [${mode}] keeps only a bounded tail of flooding output`, async () => {
    const { outcome, world } = await attempt(
      "head -c 20000000 /dev/zero | tr '\\0' x; echo; echo END",
      mode,
    );
    await world.remove();
    assert.deepEqual(outcome.status, "completed");
    assert.deepEqual(outcome.evidence.stdoutBytes, 20_000_005);
    const tail = outcome.evidence.stdoutTail as string;
    assert(tail.length <= 1000);
    assert.match(tail, /x\nEND\n$/);
  });

  Deno.test(`commandCandidate() [${mode}] reports a crash with its exit status and stderr`, async () => {
    const { outcome, world } = await attempt("echo boom >&2; exit 3", mode);
    await world.remove();
    assert.deepEqual(outcome.status, "crashed");
    assert.deepEqual(outcome.evidence.exitCode, 3);
    assert.deepEqual(outcome.evidence.stderrTail, "boom\n");
  });

  Deno.test(`commandCandidate() [${mode}] fails an attempt whose shell cannot run what it names`, async () => {
    // The command line's program exists (sh); what it runs is the candidate's own doing.
    const { outcome, world } = await attempt("echo trying; exec no-such-agent-xyz --go", mode);
    await world.remove();
    assert.deepEqual(outcome.status, "crashed");
    assert.match(
      outcome.message ?? "",
      /^"t" the shell could not run it \(exit 127\): .*not found/,
    );
    const exit126 = await attempt("exec /etc/passwd", mode);
    await exit126.world.remove();
    assert.deepEqual(exit126.outcome.status, "crashed");
    assert.match(exit126.outcome.message ?? "", /the shell could not run it \(exit 126\)/);
  });

  Deno.test(`commandCandidate() [${mode}] preflight() names a program that is not there`, async () => {
    const cand = (command: string, mounts?: string[]) =>
      commandCandidate({ name: "t", command, mounts }, { isolation: mode, env });
    await assert.rejects(
      () => cand("pyhton3 agent.py").preflight!(),
      (e: DvergrError) =>
        e.code === "CANDIDATE_INVALID" && /program "pyhton3" is not on /.test(e.message) &&
        /spelling/.test(e.hint ?? ""),
    );
    await assert.rejects(
      () => cand("/usr/bin/no-such-agent-xyz --go").preflight!(),
      /program "\/usr\/bin\/no-such-agent-xyz" does not exist in /,
    );
    await assert.rejects(() => cand("/etc/passwd").preflight!(), /is not executable/);
    // Under bubblewrap a path outside the system and the mounts may be the world's: unchecked.
    const elsewhere = cand("/no-such-dir/agent --go").preflight!();
    if (mode === "bwrap") await elsewhere;
    else await assert.rejects(() => elsewhere, /does not exist in this host/);
    // Programs that exist, builtins, and what only the shell can resolve pass.
    for (
      const ok of [
        "sh -c 'exit 0'",
        "cat docs/q.txt > out/a",
        "echo hi; nosuchthing",
        "exit 127",
        "$AGENT --go",
        "A=1 nosuch",
        "'nosuch' x",
        "2>/dev/null nosuch",
        "f() { :; }; f",
        "./agent.sh",
        "(nosuch)",
      ]
    ) await cand(ok).preflight!();
  });
}

if (hasBwrap) {
  Deno.test("commandCandidate() [bwrap] confines writes to the world and has no network", async () => {
    const { outcome, captured, world } = await attempt(
      "echo x > /out/ok.txt; echo y > /docs/in-docs.txt; echo z > /escaped.txt 2>/dev/null; " +
        "echo w > /etc/dvergr-escape 2>/dev/null && echo wrote-etc > /out/etc.txt; " +
        "tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' ' | tr '\\n' ' ' > /out/net.txt; true",
      "bwrap",
    );
    assert.deepEqual(outcome.status, "completed");
    assert.deepEqual(captured.files["/out/ok.txt"], "x\n");
    assert.deepEqual(captured.files["/out/etc.txt"], undefined);
    // Only the loopback interface of its own network namespace.
    assert.deepEqual(captured.files["/out/net.txt"], "lo ");
    // The world's other directories are read-only: nothing the candidate writes lands there.
    await assert.rejects(() => world.files.read("/docs/in-docs.txt"), /no such file/);
    assert.deepEqual(Object.keys(captured.files).sort(), ["/out/net.txt", "/out/ok.txt"]);
    await world.remove();
    let escaped = true;
    try {
      await Deno.lstat("/escaped.txt");
    } catch {
      escaped = false;
    }
    assert(!escaped);
  });

  Deno.test("commandCandidate() [bwrap] reaches read-only mounts but cannot change them", async () => {
    const agents = await Deno.makeTempDir();
    // As root the candidate is an unprivileged uid: it reads what every user may.
    await Deno.chmod(agents, 0o755);
    await Deno.writeTextFile(
      `${agents}/agent.sh`,
      "cat docs/a.md > out/answer.txt; echo no > " + agents + "/agent.sh",
    );
    const { outcome, captured, world } = await attempt(`sh ${agents}/agent.sh`, "bwrap", {
      mounts: [agents],
    });
    await world.remove();
    assert.deepEqual(outcome.status, "crashed");
    assert.deepEqual(captured.files["/out/answer.txt"], "hello");
    assert.match(await Deno.readTextFile(`${agents}/agent.sh`), /^cat docs/);
    await Deno.remove(agents, { recursive: true });
  });

  Deno.test("commandCandidate() [bwrap] cannot start with a mount that does not exist", async () => {
    const { outcome, world } = await attempt("true", "bwrap", {
      mounts: ["/no/such/dir-for-dvergr"],
    });
    await world.remove();
    assert.deepEqual(outcome.status, "fault");
    assert.match(outcome.message ?? "", /mount "\/no\/such\/dir-for-dvergr" does not exist/);
  });

  Deno.test("commandCandidate().preflight() refuses a missing mount before any cell", async () => {
    const cand = commandCandidate({ name: "t", command: "true", mounts: ["/no/such/dir"] }, {
      isolation: "bwrap",
      env: (k) => Deno.env.get(k),
    });
    await assert.rejects(() => cand.preflight!(), (e: Error) => {
      assert.match(
        e.message,
        /Cannot use candidate "t": its mount "\/no\/such\/dir" does not exist/,
      );
      return true;
    });
  });

  Deno.test("commandCandidate() [bwrap] refuses a world that would hide /etc", async () => {
    const { outcome, world } = await attempt("true", "bwrap", { fixtures: { "/etc/x": "1" } });
    await world.remove();
    assert.deepEqual(outcome.status, "fault");
    assert.match(outcome.message ?? "", /would hide the sandbox's own \/etc/);
  });
}
