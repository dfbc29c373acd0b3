/**
 * dvergr's shell server (shell_server.ts): scripts run on request by one long-lived /bin/sh,
 * each in a subshell, answered with what they printed, null when they failed, and undefined
 * (the caller spawns a shell) when it cannot answer.
 */
import assert from "node:assert/strict";
import { sentBytes, served } from "../../../../adapters/candidates/command/shell_server.ts";

/**
 * The pid of this module's shell server: `$$` in a script is the server's (the subshell keeps
 * its parent's `$$`). Other test files, run at the same time by `deno test --parallel` in the
 * same process, have servers of their own, so counting processes would not tell which is ours.
 */
async function serverPid(): Promise<number> {
  const out = await served('echo "$$"', []);
  assert.ok(typeof out === "string" && /^[0-9]+\n$/.test(out), `a pid: ${out}`);
  return Number(out);
}

Deno.test("served() answers what a script printed, with its arguments; null when it failed", async () => {
  assert.equal(await served('echo "$#:$1|$2"; printf x', ["a b", ""]), "2:a b|\nx");
  // Its variables and its exit are its own: the server goes on.
  assert.equal(await served("x=1; exit 0", []), "");
  assert.equal(await served('echo "[$x]"', []), "[]\n");
  assert.equal(await served("echo partial; exit 3", []), null);
  assert.equal(await served('while IFS= read -r l; do echo "$l"; done < /nonexistent', []), null);
  // Lines that read like the server's own answer are the script's.
  assert.equal(await served("echo; echo dvergr-0 ok", []), "\ndvergr-0 ok\n");
  // Its stdin is /dev/null, not the requests.
  assert.equal(await served("cat; echo done", []), "done\n");
  // Several at once are answered in turn.
  const many = await Promise.all(
    Array.from({ length: 20 }, (_, i) => served('echo "$1"', [`${i}`])),
  );
  assert.deepEqual(many, Array.from({ length: 20 }, (_, i) => `${i}\n`));
});

Deno.test("served() cannot answer an argument with a newline; a server that ended is started again", async () => {
  assert.equal(await served('echo "$1"', ["a\nb"]), undefined);
  assert.equal(await served("echo up", []), "up\n");
  const pid = await serverPid();
  // One server answers every request.
  assert.equal(await serverPid(), pid);
  Deno.kill(pid, "SIGKILL");
  // The request given to the dead one is not answered by it; the next is, by a new one.
  const answers = [await served("echo again", []), await served("echo again", [])];
  assert.equal(answers[1], "again\n");
  assert.ok(answers[0] === undefined || answers[0] === "again\n");
  const next = await serverPid();
  assert.notEqual(next, pid);
});

Deno.test("served() sends a script once: later requests of it send its arguments alone", async () => {
  // The shell reads its requests a byte a system call: a long script is defined once.
  const script = `# ${"x".repeat(400)}\nprintf '%s:' "$@"; v=set; echo "[$v]"`;
  assert.equal(await served(script, ["a"]), "a:[set]\n");
  const before = sentBytes();
  assert.equal(await served(script, ["b", "c d"]), "b:c d:[set]\n");
  const second = sentBytes() - before;
  assert.ok(second < 20, `the second request sent ${second} bytes`);
  // Defined beside others, each keeps its own body; a new server is sent it again.
  assert.equal(await served('echo "other $1"', ["x"]), "other x\n");
  assert.equal(await served(script, []), ":[set]\n");
  const pid = await serverPid();
  Deno.kill(pid, "SIGKILL");
  let again = await served(script, ["e"]);
  if (again === undefined) again = await served(script, ["e"]);
  assert.equal(again, "e:[set]\n");
  assert.notEqual(await serverPid(), pid);
});

Deno.test("served(…, inShell) runs a script in the server's own shell: no subshell, a failed redirection or read ends nothing", async () => {
  const pid = await serverPid();
  // Its variables stay the server's (the subshell's would not).
  assert.equal(await served('echo "[$cmm_x]"; cmm_x=1', [], true), "[]\n");
  assert.equal(await served('echo "[$cmm_x]"; cmm_x=1', [], true), "[1]\n");
  assert.equal(await served('echo "[$cmm_x]"', []), "[1]\n", "a subshell sees the server's");
  assert.equal(await served('echo "$1"', ["a b"], true), "a b\n");
  // What the cgroup scripts meet when a file is gone: the server goes on.
  assert.equal(
    await served('while IFS= read -r l; do echo "$l"; done < /nonexistent', [], true),
    null,
  );
  assert.equal(await served('read -r f < /nonexistent; echo "f=$f"', [], true), "f=\n");
  assert.equal(await serverPid(), pid);
  // The same text asked both ways is two functions: each runs as asked.
  assert.equal(await served("y=2; echo ok", [], true), "ok\n");
  assert.equal(await served("y=3; echo ok", []), "ok\n");
  assert.equal(await served('echo "$y"', [], true), "2\n");
});
