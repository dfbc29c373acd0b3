/**
 * The world gateway's socket directories a killed dvergr left are swept: one named for a pid
 * that no longer runs goes, one of a live process (this one, another) stays, one of the older
 * form goes once a day old, and anything else in the temp dir is left alone.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { gatewayDirPrefix, sweepGatewayDirs } from "../../../adapters/gateway/gateway_dirs.ts";

/** A pid that ran and ended: a child's, after it was waited for. */
async function deadPid(): Promise<number> {
  const child = new Deno.Command("true").spawn();
  await child.status;
  return child.pid;
}

Deno.test("sweepGatewayDirs() removes what dead processes left and nothing else", async () => {
  const tmp = await Deno.makeTempDir({ prefix: "dvergr-sweep-test-" });
  const live = new Deno.Command("sleep", { args: ["60"], stdout: "null", stderr: "null" }).spawn();
  try {
    const dead = await deadPid();
    const make = async (name: string, mtime?: Date) => {
      await Deno.mkdir(join(tmp, name));
      await Deno.writeTextFile(join(tmp, name, "gw.sock"), "");
      if (mtime) await Deno.utime(join(tmp, name), mtime, mtime);
    };
    await make(`dvg-${dead}-abc123`);
    await make(`${gatewayDirPrefix()}mine`);
    await make(`dvg-${live.pid}-theirs`);
    const now = Date.now();
    await make("dvg-oldform1", new Date(now - 2 * 24 * 3600 * 1000));
    await make("dvg-oldform2", new Date(now - 60 * 1000));
    await make("dvgx-not-ours");
    await Deno.writeTextFile(join(tmp, `dvg-${dead}-file`), "a file, not a directory");

    assert.equal(await sweepGatewayDirs(tmp, now), 2);
    const left = (await Array.fromAsync(Deno.readDir(tmp), (e) => e.name)).sort();
    assert.deepEqual(
      left,
      [
        `${gatewayDirPrefix()}mine`,
        `dvg-${dead}-file`,
        `dvg-${live.pid}-theirs`,
        "dvg-oldform2",
        "dvgx-not-ours",
      ].sort(),
    );
  } finally {
    live.kill("SIGKILL");
    await live.status;
    await Deno.remove(tmp, { recursive: true });
  }
});

Deno.test("sweepGatewayDirs() of a temp dir it cannot read removes nothing and does not throw", async () => {
  assert.equal(await sweepGatewayDirs("/nonexistent/dvergr-sweep"), 0);
});
