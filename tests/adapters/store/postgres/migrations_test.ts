import assert from "node:assert/strict";
import { startPostgres } from "../../../helpers/postgres.ts";
import { dvergrIn } from "../../../helpers/cli.ts";
import {
  connectPostgres,
  redactUrl,
  storeUrl,
} from "../../../../adapters/store/postgres/connect.ts";
import {
  migrate,
  SCHEMA_VERSION,
  schemaVersion,
} from "../../../../adapters/store/postgres/migrations.ts";
import { DvergrError } from "../../../../core/errors.ts";

const cluster = await startPostgres();
const ignore = cluster === null;
Deno.test.afterAll(async () => await cluster?.stop());

Deno.test("storeUrl() takes --store, else DVERGR_STORE, and refuses what is not postgres://", () => {
  const env = (v?: string) => (k: string) => (k === "DVERGR_STORE" ? v : undefined);
  assert.equal(storeUrl(undefined, env()), null);
  assert.equal(storeUrl(undefined, env("postgres://a@h/d")), "postgres://a@h/d");
  assert.equal(storeUrl("postgresql://b@h/d", env("postgres://a@h/d")), "postgresql://b@h/d");
  assert.throws(
    () => storeUrl("/var/dvergr", env()),
    (e) => e instanceof DvergrError && e.code === "USAGE",
  );
  assert.equal(redactUrl("postgres://u:secret@h:5432/d"), "postgres://u:***@h:5432/d");
});

Deno.test({
  name: "migrate() creates the schema once, from several processes' connections at once",
  ignore,
  async fn() {
    const url = await cluster!.database();
    const pools = await Promise.all([1, 2, 3].map(() => connectPostgres(url, { max: 1 })));
    try {
      assert.equal(await schemaVersion(pools[0]), 0);
      const results = await Promise.all(pools.map((p) => migrate(p)));
      assert.equal(results.filter((r) => r.applied.length > 0).length, 1);
      assert.equal(await schemaVersion(pools[1]), SCHEMA_VERSION);
      const again = await migrate(pools[2]);
      assert.deepEqual(again, { from: SCHEMA_VERSION, to: SCHEMA_VERSION, applied: [] });
    } finally {
      await Promise.all(pools.map((p) => p.end()));
    }
  },
});

Deno.test({
  name: "migrate() refuses a schema newer than this dvergr knows",
  ignore,
  async fn() {
    const url = await cluster!.database();
    const sql = await connectPostgres(url, { max: 1 });
    try {
      await migrate(sql);
      await sql`insert into dvergr_schema (version, name) values (${SCHEMA_VERSION + 1}, 'future')`;
      await assert.rejects(
        () => migrate(sql),
        (e) =>
          e instanceof DvergrError && /version \d+, newer than this dvergr knows/.test(e.message),
      );
    } finally {
      await sql.end();
    }
  },
});

Deno.test({
  name: "dvergr store migrate migrates and says so; a store that is down is exit 2 naming it",
  ignore,
  async fn() {
    const url = await cluster!.database();
    const first = await dvergrIn("/", "store", "migrate", "--store", url);
    assert.equal(first.code, 0, first.err);
    assert.match(first.out, new RegExp(`schema 0 → ${SCHEMA_VERSION}`));
    const second = await dvergrIn("/", "store", "migrate", "--store", url, "--json");
    assert.equal(second.code, 0, second.err);
    assert.deepEqual(JSON.parse(second.out).applied, []);
    const status = await dvergrIn("/", "store", "status", "--store", url);
    assert.match(status.out, new RegExp(`schema version ${SCHEMA_VERSION}`));
    // Nothing listens on this port: a refused connection, said in one line with a hint.
    const port = cluster!.port === 1 ? 2 : 1;
    const down = await dvergrIn(
      "/",
      "store",
      "migrate",
      "--store",
      `postgres://u:pw@127.0.0.1:${port}/x`,
    );
    assert.equal(down.code, 2, down.err);
    assert.match(
      down.err,
      /error\[IO\]: Cannot reach the store postgres:\/\/u:\*\*\*@127\.0\.0\.1/,
    );
    assert(!down.err.includes("pw@"), "the password was printed");
    assert(!down.err.includes("    at "), down.err);
  },
});

Deno.test({
  name: "startPostgres() gives a cluster that can be halted and restarted",
  ignore,
  async fn() {
    const url = await cluster!.database();
    const sql = await connectPostgres(url, { max: 1 });
    try {
      await cluster!.restart();
      // The pool reconnects on its own after the server came back.
      const [{ n }] = await sql`select 41 + 1 as n`;
      assert.equal(n, 42);
    } finally {
      await sql.end();
    }
  },
});
