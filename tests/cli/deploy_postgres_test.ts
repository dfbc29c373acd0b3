/**
 * Runs, reviews and schedules on a PostgreSQL store shared by two machines (two homes, each
 * with its own copy of the room): a schedule deployed from one is seen by the other, two
 * `dvergr tick` processes (one per home) start its due slot once, the run's record is read
 * from either, and a home without the schedule's room leaves the slot to one that has it.
 */
import assert from "node:assert/strict";
import { dvergrWithPath } from "../helpers/cli.ts";
import { wikiHome } from "../helpers/wiki_room.ts";
import { startPostgres } from "../helpers/postgres.ts";

const cluster = await startPostgres();
Deno.test.afterAll(async () => await cluster?.stop());

const dvergr = (args: string[], env: Record<string, string>) => dvergrWithPath(args, env);

Deno.test({
  name: "schedules and runs on a PostgreSQL store: two machines start a due slot once",
  ignore: cluster === null,
  async fn() {
    const store = await cluster!.database();
    const [a, b] = [await wikiHome(), await wikiHome()];
    const bare = await Deno.makeTempDir({ prefix: "dvergr-no-room-" });
    try {
      const deployed = await dvergr([
        "deploy",
        "wiki/wiki-keeper",
        "--candidate",
        "builtin:reference",
        "--every",
        "1d",
        "--home",
        a,
        "--store",
        store,
        "--json",
      ], {});
      assert.equal(deployed.code, 0, deployed.out + deployed.err);
      const s = JSON.parse(deployed.out) as { id: string; nextRun: string };
      // The other machine sees it (by DVERGR_STORE), and its own home holds no schedule.
      const listed = await dvergr(["schedules", "--home", b], { DVERGR_STORE: store });
      assert.match(listed.out, new RegExp(`^${s.id}  wiki/wiki-keeper`, "m"));
      const local = await dvergr(["schedules", "--home", b], {});
      assert.doesNotMatch(local.out, new RegExp(s.id));

      const now = new Date(Date.parse(s.nextRun) + 60_000).toISOString();
      // A machine without the room leaves the slot to others, and says so.
      const none = await dvergr(["tick", "--now", now, "--home", bare, "--store", store], {});
      assert.equal(none.code, 1, none.out + none.err);
      assert.match(none.out, /not started here: room "wiki" is not in this home/);
      const ticks = await Promise.all(
        [a, b].map((home) =>
          dvergr(["tick", "--now", now, "--home", home, "--store", store, "--json"], {})
        ),
      );
      const started = ticks.flatMap((t) => {
        assert.equal(t.code, 0, t.out + t.err);
        return (JSON.parse(t.out).ticks as { started: boolean; run: string }[])
          .filter((x) => x.started);
      });
      assert.equal(started.length, 1, ticks.map((t) => t.out).join("\n"));
      // The run's record is the store's: either machine lists it.
      for (const home of [a, b]) {
        const runs = await dvergr(["runs", "--home", home, "--store", store, "--json"], {});
        assert.equal(runs.code, 0, runs.err);
        const list = JSON.parse(runs.out).runs as { id: string; schedule?: string }[];
        assert.deepEqual(list.map((r) => [r.id, r.schedule]), [[started[0].run, s.id]]);
      }
    } finally {
      for (const d of [a, b, bare]) await Deno.remove(d, { recursive: true });
    }
  },
});
