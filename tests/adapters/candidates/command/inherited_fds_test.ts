import assert from "node:assert/strict";
import { fdClosing } from "../../../../adapters/candidates/command/inherited_fds.ts";
import { DvergrError } from "../../../../core/errors.ts";
import { DVERGR_PERMISSIONS } from "../../../../core/permissions.ts";

/** What `script` (deno eval, dvergr's permissions) prints as JSON, started by a bash that ran `open`. */
async function evalStartedAfter(open: string, script: string): Promise<unknown> {
  const out = await new Deno.Command("/bin/bash", {
    args: [
      "-c",
      `${open}exec "$@"`,
      "dvergr-fds-test",
      Deno.execPath(),
      "eval",
      ...DVERGR_PERMISSIONS,
      script,
    ],
    stdout: "piped",
    stderr: "piped",
  }).output();
  assert(out.success, new TextDecoder().decode(out.stderr));
  return JSON.parse(new TextDecoder().decode(out.stdout));
}

Deno.test("fdClosing() closes low descriptors in /bin/sh and high ones in bash, refuses without bash", () => {
  assert.deepEqual(fdClosing([], null), { prefix: [], line: null });
  assert.deepEqual(fdClosing([3, 9], null), { prefix: [], line: "exec 3>&- 9>&-" });
  assert.deepEqual(fdClosing([5, 47], "/bin/bash"), {
    prefix: ["/bin/bash", "-c", 'exec 5>&- 47>&-\nexec "$@"', "dvergr-fds"],
    line: null,
  });
  assert.throws(
    () => fdClosing([5, 47], null),
    (e) =>
      e instanceof DvergrError && e.code === "USAGE" && /open descriptors 5, 47/.test(e.message),
  );
});

Deno.test("inheritedFds() names what the starting process left open without close-on-exec", async () => {
  const module =
    new URL("../../../../adapters/candidates/command/inherited_fds.ts", import.meta.url)
      .href;
  const script = `const { inheritedFds } = await import(${JSON.stringify(module)});
console.log(JSON.stringify(await inheritedFds()));`;
  const run = async (open: string) => await evalStartedAfter(open, script) as number[];
  const opened = await run("exec 6</ 47</ 48>/dev/null; exec 49</dev/null; exec 49>&-; ");
  for (const n of [6, 47, 48]) assert(opened.includes(n), `${n} in ${opened}`);
  assert(!opened.includes(49), `a closed descriptor: ${opened}`);
  assert(opened.every((n) => n > 2), `stdio is not counted: ${opened}`);
  // What Deno opens itself (its cache, its runtime's descriptors) is close-on-exec.
  const none = await run("exec 6<&- 47<&- 48<&-; ");
  for (const n of [6, 47, 48]) assert(!none.includes(n), `${n} in ${none}`);
});

Deno.test("the launch closes a high inherited descriptor and still runs under /bin/sh", async () => {
  const url = (p: string) => JSON.stringify(new URL(`../../../../${p}`, import.meta.url).href);
  const script = `const { launchArgv } = await import(${
    url("adapters/candidates/command/command.ts")
  });
const { launchFdClosing } = await import(${url("adapters/candidates/command/inherited_fds.ts")});
const launch = (argv) => launchFdClosing(Deno.env.get("PATH") ?? "/usr/bin:/bin").then((closing) => launchArgv(
  { cgroup: null, held: false, marks: false, filter: null, rlimits: "ulimit -n 1024", closing },
  { argv, staging: null },
));
const run = async (argv) => {
  const out = await new Deno.Command(argv[0], { args: argv.slice(1), stdout: "piped", stderr: "piped" })
    .output();
  return { argv, out: new TextDecoder().decode(out.stdout), err: new TextDecoder().decode(out.stderr) };
};
console.log(JSON.stringify([
  await run(await launch(["/bin/sh", "-c", "ls /proc/self/fd"])),
  await run(await launch(["dvergr-no-such-program"])),
]));`;
  const [listed, missing] = await evalStartedAfter("exec 5</ 47</; ", script) as {
    argv: string[];
    out: string;
    err: string;
  }[];
  assert.match(listed.argv[0], /bash$/);
  const held = listed.out.split("\n").filter((l) => l !== "").map(Number);
  assert(!held.includes(5) && !held.includes(47), `the command holds ${held}`);
  // The launch's own shell says it as dash does ("not found"), not as bash would.
  assert.match(missing.err, /^dvergr-launch: \d+: .*dvergr-no-such-program: not found/m);
});
