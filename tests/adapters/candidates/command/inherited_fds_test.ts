import assert from "node:assert/strict";
import { fdClosing } from "../../../../adapters/candidates/command/inherited_fds.ts";
import { DvergrError } from "../../../../core/errors.ts";
import { DVERGR_PERMISSIONS } from "../../../../core/permissions.ts";

Deno.test("fdClosing() closes low descriptors in /bin/sh and high ones in bash, refuses without bash", () => {
  assert.deepEqual(fdClosing([], null), { shell: "/bin/sh", line: null });
  assert.deepEqual(fdClosing([3, 9], null), { shell: "/bin/sh", line: "exec 3>&- 9>&-" });
  assert.deepEqual(fdClosing([5, 47], "/bin/bash"), {
    shell: "/bin/bash",
    line: "exec 5>&- 47>&-",
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
  const run = async (open: string) => {
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
    return JSON.parse(new TextDecoder().decode(out.stdout)) as number[];
  };
  const opened = await run("exec 6</ 47</ 48>/dev/null; exec 49</dev/null; exec 49>&-; ");
  for (const n of [6, 47, 48]) assert(opened.includes(n), `${n} in ${opened}`);
  assert(!opened.includes(49), `a closed descriptor: ${opened}`);
  assert(opened.every((n) => n > 2), `stdio is not counted: ${opened}`);
  // What Deno opens itself (its cache, its runtime's descriptors) is close-on-exec.
  const none = await run("exec 6<&- 47<&- 48<&-; ");
  for (const n of [6, 47, 48]) assert(!none.includes(n), `${n} in ${none}`);
});
