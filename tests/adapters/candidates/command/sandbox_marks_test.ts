import assert from "node:assert/strict";
import {
  openSandboxMarks,
  withMarksFd,
} from "../../../../adapters/candidates/command/sandbox_marks.ts";
import { descendants, gone } from "../../../helpers/processes.ts";

async function run(script: string) {
  const dir = await Deno.makeTempDir();
  const marks = await openSandboxMarks(dir);
  const went: number[] = [];
  marks.onGo(() => went.push(performance.now()));
  const [cmd, ...args] = withMarksFd(marks.path, ["/bin/sh", "-c", script]);
  const out = await new Deno.Command(cmd, { args, stderr: "piped" }).output();
  await marks.close();
  const left = [...Deno.readDirSync(dir)];
  await Deno.remove(dir, { recursive: true });
  return { marks, went, out, left };
}

Deno.test("openSandboxMarks() hears started, then go, from the descriptor withMarksFd() opens", async () => {
  const { marks, went, left } = await run("echo started >&8; echo go >&8; exec 8>&-; exit 3");
  assert.equal(marks.started, true);
  assert.notEqual(marks.goAt, null);
  assert.equal(went.length, 1);
  assert.deepEqual(left, []); // the FIFO is removed
});

Deno.test("openSandboxMarks() takes go only after started, and each mark once", async () => {
  const early = await run("echo go >&8; echo started >&8");
  assert.equal(early.marks.started, true);
  assert.equal(early.marks.goAt, null);
  const twice = await run("echo started >&8; echo go >&8; echo go >&8; echo started >&8");
  assert.equal(twice.went.length, 1);
});

Deno.test("openSandboxMarks() without a mark: not started, and close() does not wait for one", async () => {
  const t0 = performance.now();
  const { marks } = await run("exit 0");
  assert.equal(marks.started, false);
  assert.equal(marks.goAt, null);
  assert.ok(performance.now() - t0 < 10_000);
});

Deno.test("withMarksFd() exits 125 when the FIFO cannot be opened", async () => {
  const [cmd, ...args] = withMarksFd("/no-such-dir/marks", ["/bin/sh", "-c", "exit 0"]);
  const out = await new Deno.Command(cmd, { args, stderr: "null" }).output();
  assert.equal(out.code, 125);
});

Deno.test("openSandboxMarks() whose FIFO no sandbox ever opened: close() ends the reader's wait", async () => {
  const dir = await Deno.makeTempDir();
  const marks = await openSandboxMarks(dir);
  await marks.close();
  assert.equal(marks.started, false);
  assert.deepEqual([...Deno.readDirSync(dir)], []);
  await Deno.remove(dir, { recursive: true });
});

Deno.test("openSandboxMarks()'s reader does not outlive its process killed with SIGKILL", async () => {
  const dir = await Deno.makeTempDir();
  const module = new URL(
    "../../../../adapters/candidates/command/sandbox_marks.ts",
    import.meta.url,
  ).href;
  // A process that opens the marks (nothing ever writes them) and says so, then waits.
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "eval",
      `const { openSandboxMarks } = await import(${JSON.stringify(module)});
       await openSandboxMarks(${JSON.stringify(dir)});
       console.log("open");
       setTimeout(() => {}, 600_000);`,
    ],
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  assert.equal((await reader.read()).value?.trim(), "open");
  const ours = descendants(child.pid);
  assert.ok(ours.some((p) => p.cmd.startsWith("cat")), JSON.stringify(ours));
  child.kill("SIGKILL");
  await child.status;
  await reader.cancel();
  // Gone as soon as they are; the deadline only fails when they really remain.
  assert.deepEqual(await gone(ours, 60_000), []);
  await Deno.remove(dir, { recursive: true });
});
