import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { DVERGR_PERMISSIONS } from "../../core/permissions.ts";

const MAIN = fileURLToPath(new URL("../../main.ts", import.meta.url));

/** Runs dvergr with its stdout closed by the reader before anything is written. */
async function withClosedStdout(args: string[], cwd: string) {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", ...DVERGR_PERMISSIONS, MAIN, ...args],
    cwd,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  await child.stdout.cancel(); // the reader is gone, as `| head -1` is after one line
  const [status, stderr] = await Promise.all([
    child.status,
    new Response(child.stderr).text(),
  ]);
  return { code: status.code, stderr };
}

Deno.test("dvergr cases whose stdout is closed ends quietly: exit 0, no stack trace", async () => {
  const dir = await Deno.makeTempDir();
  await Deno.writeTextFile(`${dir}/t.csv`, "id,text,label\n1,a,x\n2,b,y\n3,c,x\n");
  const r = await withClosedStdout(
    [
      "cases",
      "t.csv",
      "--id",
      "id",
      "--inputs",
      "text",
      "--outcome",
      "label:exact",
      "--out",
      "p",
      "--json",
    ],
    dir,
  );
  assert.equal(r.code, 0, r.stderr);
  assert.ok(!/internal error|BrokenPipe|at /.test(r.stderr), r.stderr);
});
