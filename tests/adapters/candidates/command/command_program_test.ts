/**
 * A command line of plain words is exec'd without `/bin/sh -c` (one process fewer per
 * attempt), and behaves as the shell would have run it: its arguments, its exit status, a
 * program the shell could not run. Anything the shell would do more with keeps the shell.
 */
import assert from "node:assert/strict";
import { hostProgram, plainArgv } from "../../../../adapters/candidates/command/command_program.ts";
import {
  commandCandidate,
  detectBwrap,
  type Isolation,
} from "../../../../adapters/candidates/command/command.ts";
import { attemptInWorld } from "../../../helpers/attempt_world.ts";

Deno.test("plainArgv() splits plain words only", () => {
  assert.deepEqual(plainArgv("sh /agents/agent.sh"), ["sh", "/agents/agent.sh"]);
  assert.deepEqual(plainArgv("  python3\t-u my_agent.py --k=v a,b:c@d%e+f "), [
    "python3",
    "-u",
    "my_agent.py",
    "--k=v",
    "a,b:c@d%e+f",
  ]);
  for (
    const shell of [
      "",
      "   ",
      "A=1 prog",
      "echo hi",
      "exit 3",
      "cd /x",
      ". ./env",
      "if",
      "prog 'a b'",
      'prog "a"',
      "prog $HOME",
      "prog ~/x",
      "prog *.txt",
      "prog a?",
      "prog [ab]",
      "prog > out",
      "prog 2>&1",
      "prog; other",
      "prog && other",
      "prog | other",
      "prog &",
      "prog # note",
      "prog\nother",
      "prog a\\ b",
      "(prog)",
      "{ prog; }",
      "! prog",
      "prog `x`",
      "prog $(x)",
    ]
  ) assert.equal(plainArgv(shell), null, JSON.stringify(shell));
});

const env = (k: string) => Deno.env.get(k);
const modes: Isolation[] = (await detectBwrap(env)) ? ["bwrap", "none"] : ["none"];

for (const mode of modes) {
  Deno.test(`commandCandidate() [${mode}] runs a plain command line as the shell would`, async () => {
    const dir = await Deno.makeTempDir({ prefix: "dvergr-plain-" });
    try {
      await Deno.writeTextFile(
        `${dir}/agent.sh`,
        'printf "%s|" "$0" "$@" > out/args; cat docs/a.md >> out/args; exit 7\n',
      );
      await Deno.chmod(dir, 0o755);
      await Deno.chmod(`${dir}/agent.sh`, 0o755);
      const run = async (command: string) => {
        const { world, ctx } = await attemptInWorld("t", 20_000);
        try {
          const outcome = await commandCandidate({ name: "t", command, mounts: [dir] }, {
            isolation: mode,
            env,
          }).run(ctx);
          return { outcome, out: (await world.capture(["/out"])).files };
        } finally {
          await world.remove();
        }
      };
      const plain = await run(`sh ${dir}/agent.sh a=1 --b x,y`);
      assert.equal(plain.outcome.evidence.exitCode, 7);
      assert.equal(plain.out["/out/args"], `${dir}/agent.sh|a=1|--b|x,y|hello`);
      // The same through the shell (a quoted word): the same arguments and status.
      const shell = await run(`sh '${dir}/agent.sh' a=1 --b x,y`);
      assert.equal(shell.outcome.evidence.exitCode, 7);
      assert.equal(shell.out["/out/args"], plain.out["/out/args"]);
      // A program that is not there: exit 127, the candidate's failure, as with the shell.
      const missing = await run(`${dir}/no-such-agent --go`);
      assert.equal(missing.outcome.status, "crashed");
      // As /bin/sh says it, whichever descriptors dvergr was started with (inherited_fds.ts).
      assert.match(missing.outcome.message ?? "", /could not run it \(exit 127\): .*not found/);
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  });
}

Deno.test("hostProgram() finds a program once by absolute path, as its runner's lookup would", async () => {
  const top = await Deno.makeTempDir();
  try {
    // A directory only its owner passes, then one every user passes: both hold the program.
    const closed = `${top}/closed`;
    const open = `${top}/open`;
    const name = `dvergr-tool-${crypto.randomUUID().slice(0, 8)}`;
    for (const d of [closed, open]) {
      await Deno.mkdir(`${d}/bin`, { recursive: true });
      await Deno.writeTextFile(`${d}/bin/${name}`, "#!/bin/sh\n", { mode: 0o755 });
    }
    await Deno.chmod(top, 0o755);
    await Deno.chmod(closed, 0o700);
    await Deno.chmod(open, 0o755);
    const path = `relative:${top}/missing:${closed}/bin:${open}/bin`;
    // Its owner finds the first; a uid that owns nothing only the one it can reach.
    assert.equal(hostProgram(name, path), `${closed}/bin/${name}`);
    assert.equal(hostProgram(name, path, true), `${open}/bin/${name}`);
    // Looked up once: a program removed since is still named by the path found.
    await Deno.remove(`${closed}/bin/${name}`);
    assert.equal(hostProgram(name, path), `${closed}/bin/${name}`);
    // A file only its owner may execute is not one for others.
    await Deno.chmod(`${open}/bin/${name}`, 0o750);
    assert.equal(hostProgram(name, `${open}/bin`, true), name);
    // Nowhere on PATH: the bare name, whose exec fails as it would have.
    assert.equal(hostProgram(`${name}-none`, `${open}/bin`), `${name}-none`);
  } finally {
    await Deno.remove(top, { recursive: true });
  }
});
