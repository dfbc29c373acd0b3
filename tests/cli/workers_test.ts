/**
 * `dvergr worker` against a real PostgreSQL (tests/helpers/postgres.ts): workers are
 * separate processes in separate directories, as on separate machines. Every outcome
 * asserted is one that timing cannot change: each cell recorded exactly once, every
 * experiment complete, the same scorecard and report as the embedded home. The moments
 * at which a worker is killed or the server restarted depend on progress read from the
 * store, never on a sleep; waits are bounded by generous deadlines.
 */
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { join } from "node:path";
import postgres from "postgres";
import { startPostgres } from "../helpers/postgres.ts";
import { dvergrWithPath } from "../helpers/cli.ts";
import { DVERGR_RUN_FLAGS } from "../../core/permissions.ts";
import { detectBwrap } from "../../adapters/candidates/command/command.ts";
import { HELP } from "../../cli/worker.ts";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const BUNDLE = join(ROOT, "examples/workflows/invoice-fields");
const cluster = await startPostgres();
const ignore = cluster === null;
Deno.test.afterAll(async () => await cluster?.stop());

const unisolated: Record<string, string> = (await detectBwrap((k) => Deno.env.get(k)))
  ? {}
  : { DVERGR_ISOLATION: "none" };

/** The environment of a worker process: no store, no keys; PATH and Deno's cache only. */
function workerEnv(): Record<string, string> {
  const env: Record<string, string> = { ...unisolated };
  for (const k of ["PATH", "HOME", "DENO_DIR", "XDG_CACHE_HOME", "TMPDIR"]) {
    const v = Deno.env.get(k);
    if (v !== undefined) env[k] = v;
  }
  return env;
}

/** Workers started by the test running now (killed when it ends, whatever happened). */
const spawned = new Set<Deno.ChildProcess>();

/** Kills the workers a test left running (it failed) and waits for them. */
async function reap(): Promise<void> {
  for (const child of spawned) {
    try {
      child.kill("SIGKILL");
    } catch {
      // It has ended.
    }
    await child.output().catch(() => {});
  }
  spawned.clear();
}

/** A worker in a directory of its own (as on another machine). */
async function spawnWorker(url: string, ...extra: string[]): Promise<Deno.ChildProcess> {
  const dir = await Deno.makeTempDir({ prefix: "dvergr-worker-" });
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      ...DVERGR_RUN_FLAGS,
      "--config",
      join(ROOT, "deno.json"),
      join(ROOT, "main.ts"),
      "worker",
      "--store",
      url,
      "--home",
      dir,
      ...extra,
    ],
    cwd: dir,
    env: workerEnv(),
    clearEnv: true,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  spawned.add(child);
  return child;
}

/** Its exit code (null when a signal ended it) and what it wrote to stderr. */
async function ended(child: Deno.ChildProcess): Promise<{ code: number | null; err: string }> {
  const out = await child.output();
  spawned.delete(child);
  return {
    code: out.signal === null ? out.code : null,
    err: new TextDecoder().decode(out.stderr),
  };
}

/** Polls `f` until it is true, at most `ms` (then fails with `what`). */
async function until(f: () => Promise<boolean>, what: string, ms = 120_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await f())) {
    if (Date.now() > deadline) throw new Error(`Timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function records(sql: postgres.Sql, experiment?: string): Promise<number> {
  const [{ n }] = experiment === undefined
    ? await sql`select count(*)::int as n from dvergr_records`
    : await sql`select count(*)::int as n from dvergr_records where experiment = ${experiment}`;
  return n as number;
}

/** Experiments closed: every cell graded, scored by the worker that graded the last. */
async function closed(sql: postgres.Sql): Promise<number> {
  const [{ n }] = await sql`select count(*)::int as n from dvergr_queue where state = 'closed'`;
  return n as number;
}

/** Enqueues the invoice bundle with these candidates; its experiment id. */
async function enqueue(url: string, reps: number, ...candidates: string[]): Promise<string> {
  const home = await Deno.makeTempDir();
  const r = await dvergrWithPath([
    "benchmark",
    BUNDLE,
    ...candidates.flatMap((c) => ["--candidate", c]),
    "--repetitions",
    String(reps),
    "--home",
    home,
    "--store",
    url,
    "--enqueue",
    "--json",
  ], unisolated);
  assert.equal(r.code, 0, r.err);
  const out = JSON.parse(r.out);
  assert.equal(out.enqueued, true);
  return out.experiment;
}

/**
 * Every cell of `experiment` has exactly one graded record (a try that faulted, say on a
 * store that went away under an attempt, may come before it: a fault is no verdict), and no
 * cell is missing.
 */
async function assertOnceEach(sql: postgres.Sql, experiment: string, cells: number) {
  const rows = await sql`select cell, record from dvergr_records
    where experiment = ${experiment} order by cell, try`;
  const graded = new Map<string, number>();
  for (const r of rows) {
    const n = graded.get(r.cell) ?? 0;
    graded.set(r.cell, n + (JSON.parse(r.record).verdict !== null ? 1 : 0));
  }
  assert.equal(graded.size, cells, "every cell recorded (none lost)");
  assert.deepEqual([...graded].filter(([, n]) => n !== 1), [], "each cell graded once");
}

Deno.test("dvergr worker --help has an example and exit statuses", () => {
  assert.match(HELP, /Example:\n {2}dvergr worker --store postgres:/);
  assert.match(HELP, /Exit status: 0 .*2 .*143/s);
});

Deno.test({
  name:
    "three workers in separate directories, one killed with kill -9 and one stopped by SIGTERM mid-run, one joining late, run two experiments: every cell once",
  ignore,
  sanitizeResources: false,
  async fn() {
    const url = await cluster!.database();
    const sql = postgres(url, { max: 1, onnotice: () => {} });
    try {
      const a = await enqueue(url, 2, "slow=cmd:sleep 0.3", "builtin:reference");
      const b = await enqueue(url, 2, "nap=cmd:sleep 0.2");
      const w1 = await spawnWorker(url, "--parallel", "2");
      const w2 = await spawnWorker(url, "--parallel", "2");
      await until(async () => await records(sql) >= 4, "the first records");
      const w3 = await spawnWorker(url, "--parallel", "2"); // joins mid-run
      await until(async () => await records(sql) >= 8, "more records");
      w1.kill("SIGKILL");
      assert.equal((await ended(w1)).code, null);
      await until(async () => await records(sql) >= 14, "records after the kill");
      const [{ id: w2id }] = await sql`select id from dvergr_workers where pid = ${w2.pid}`;
      w2.kill("SIGTERM");
      const e2 = await ended(w2);
      assert.equal(e2.code, 143, e2.err);
      // What it was running was given back at once.
      const held = await sql`select cell from dvergr_leases where owner = ${w2id}`;
      assert.equal(held.length, 0);
      // The worker that records the last cell of an experiment scores and closes it.
      await until(async () => await closed(sql) === 2, "both experiments closed");
      w3.kill("SIGTERM");
      const e3 = await ended(w3);
      assert.ok(e3.code === 143 || e3.code === 0, e3.err);
      await assertOnceEach(sql, a, 20);
      await assertOnceEach(sql, b, 10);
      const shown = await dvergrWithPath(["show", a.slice(0, 8), "--store", url, "--json"]);
      assert.equal(shown.code, 0, shown.err);
      const workers = JSON.parse(shown.out).workers as { records: number }[];
      assert.equal(workers.reduce((n, w) => n + w.records, 0), 20);
    } finally {
      await reap();
      await sql.end();
    }
  },
});

Deno.test({
  name: "a worker goes on through a restart of the server and loses no cell",
  ignore,
  sanitizeResources: false,
  async fn() {
    const url = await cluster!.database();
    const sql = postgres(url, { max: 1, onnotice: () => {} });
    try {
      const a = await enqueue(url, 2, "slow=cmd:sleep 0.2", "nap=cmd:sleep 0.1");
      const w = await spawnWorker(url, "--parallel", "2");
      await until(async () => await records(sql) >= 3, "the first records");
      await cluster!.restart();
      await until(
        async () => await closed(sql).catch(() => 0) === 1,
        "every cell after the restart (the experiment closed)",
      ).catch(async (e) => {
        try {
          w.kill("SIGKILL");
        } catch {
          // It had ended already: what it said tells why.
        }
        const e2 = await ended(w);
        throw new Error(`${e.message}; the worker (exit ${e2.code}) said:\n${e2.err}`);
      });
      w.kill("SIGTERM");
      const e = await ended(w);
      assert.ok(e.code === 143 || e.code === 0, e.err);
      await assertOnceEach(sql, a, 20);
    } finally {
      await reap();
      await sql.end();
    }
  },
});

/** A JSON value without what differs between two runs of the same cells (times, places). */
function sameRunShape(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sameRunShape);
  if (value === null || typeof value !== "object") return value;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    if (/ms$|Ms$|time|wallClock|startedAt|createdAt|^home$|^report|^store$/i.test(k)) continue;
    out[k] = sameRunShape(v);
  }
  return out;
}

/** A report without its times. */
function reportShape(md: string): string {
  return md.replace(/\d+(\.\d+)? (ms|s)\b/g, "T");
}

Deno.test({
  name:
    "an experiment run by workers on PostgreSQL has the scorecard, report and --json of the same experiment on the embedded home",
  ignore,
  sanitizeResources: false,
  async fn() {
    const url = await cluster!.database();
    const args = [
      "benchmark",
      BUNDLE,
      "--candidate",
      "builtin:reference",
      "--candidate",
      "builtin:noop",
      "--candidate",
      "nap=cmd:sleep 0.05",
      "--repetitions",
      "2",
      "--baseline",
      "builtin:noop",
      "--json",
    ];
    const kvHome = await Deno.makeTempDir();
    const kv = await dvergrWithPath([...args, "--home", kvHome], unisolated);
    assert.equal(kv.code, 0, kv.err);
    const kvOut = JSON.parse(kv.out);
    const id = await enqueue(url, 2, "builtin:reference", "builtin:noop", "nap=cmd:sleep 0.05");
    // --baseline is the benchmark's: enqueued without it, the id is the same (not in the plan).
    assert.equal(id, kvOut.experiment);
    const w = await spawnWorker(url, "--parallel", "2", "--experiment", id);
    const e = await ended(w);
    assert.equal(e.code, 0, e.err);
    assert.match(e.err, /ended \(closed\)/);
    // The same command on the store: every cell is kept, and it prints the scorecard.
    const pg = await dvergrWithPath(
      [...args, "--home", await Deno.makeTempDir(), "--store", url],
      unisolated,
    );
    assert.equal(pg.code, 0, pg.err);
    const pgOut = JSON.parse(pg.out);
    assert.equal(pgOut.experiment, kvOut.experiment);
    assert.deepEqual(sameRunShape(pgOut), sameRunShape(kvOut));
    for (const format of ["md", "csv", "junit"]) {
      const k = await dvergrWithPath(["report", id, "--home", kvHome, "--format", format]);
      const p = await dvergrWithPath(["report", id, "--store", url, "--format", format]);
      assert.equal(k.code, 0, k.err);
      assert.equal(p.code, 0, p.err);
      if (format === "md") assert.equal(reportShape(p.out), reportShape(k.out));
      else assert.ok(p.out.length > 0);
    }
    const ks = await dvergrWithPath(["show", id, "--home", kvHome, "--json"]);
    const ps = await dvergrWithPath(["show", id, "--store", url, "--json"]);
    const cells = (o: string) =>
      JSON.parse(o).cells.map((c: Record<string, unknown>) => [
        c.candidate,
        c.case,
        c.repetition,
        c.outcome,
        c.reward,
        c.cause,
      ]);
    assert.deepEqual(cells(ps.out), cells(ks.out));
  },
});

Deno.test({
  name: "a worker whose store is down at start says so and exits 2",
  ignore,
  async fn() {
    const l = Deno.listen({ hostname: "127.0.0.1", port: 0 });
    const port = (l.addr as Deno.NetAddr).port;
    l.close();
    const r = await dvergrWithPath([
      "worker",
      "--store",
      `postgres://dvergr:secret@127.0.0.1:${port}/none`,
    ]);
    assert.equal(r.code, 2);
    assert.match(r.err, /Cannot reach the store postgres:\/\/dvergr:\*\*\*@127\.0\.0\.1/);
    assert.doesNotMatch(r.err, /secret/);
  },
});

Deno.test({
  name: "--enqueue without a store is refused before anything is written; an idle worker ends",
  ignore,
  async fn() {
    const home = await Deno.makeTempDir();
    const r = await dvergrWithPath([
      "benchmark",
      BUNDLE,
      "--candidate",
      "builtin:noop",
      "--home",
      join(home, "h"),
      "--enqueue",
    ]);
    assert.equal(r.code, 2);
    assert.match(r.err, /Cannot --enqueue without a store shared by workers/);
    assert.deepEqual([...Deno.readDirSync(home)], []);
    const url = await cluster!.database();
    const w = await dvergrWithPath([
      "worker",
      "--store",
      url,
      "--home",
      join(home, "w"),
      "--idle-exit",
      "0",
      "--json",
    ]);
    assert.equal(w.code, 0, w.err);
    assert.deepEqual(JSON.parse(w.out).reason, "idle");
    const none = await dvergrWithPath(["worker", "--store", url, "--experiment", "abcd"]);
    assert.equal(none.code, 2);
    assert.match(none.err, /No experiment "abcd" in the store/);
  },
});

/**
 * `dvergr benchmark` of a copy of the invoice bundle whose checker.js is `checker`, with
 * `args` (a home of its own, on a fresh database); then `check` is given what it ran.
 */
async function benchmarkBroken(
  checker: string,
  args: string[],
  check: (
    r: { code: number; out: string; err: string },
    sql: postgres.Sql,
    home: string,
  ) => Promise<void>,
): Promise<void> {
  const url = await cluster!.database();
  const sql = postgres(url, { max: 1, onnotice: () => {} });
  const root = await Deno.makeTempDir();
  try {
    const dir = join(root, "invoice-fields");
    const cp = await new Deno.Command("cp", { args: ["-r", BUNDLE, dir] }).output();
    assert.ok(cp.success);
    await Deno.writeTextFile(join(dir, "checker.js"), checker);
    const home = join(root, "h");
    const r = await dvergrWithPath(
      ["benchmark", dir, ...args, "--home", home, "--store", url],
      unisolated,
    );
    await check(r, sql, home);
  } finally {
    await sql.end();
    await Deno.remove(root, { recursive: true });
  }
}

Deno.test({
  name:
    "benchmark --store of a bundle whose checker does not load is refused (exit 2) and its experiment closed to workers",
  ignore,
  fn: () =>
    benchmarkBroken(
      "export function check( {\n",
      ["--candidate", "x=cmd:sleep 60"],
      async (r, sql) => {
        assert.equal(r.code, 2, r.out + r.err);
        assert.match(r.err, /error\[BUNDLE_INVALID\]: .*checker\.js line 2/);
        // Enqueued for workers as it started; closed when refused, so none runs its cells.
        const rows = await sql`select state from dvergr_queue`;
        assert.deepEqual(rows.map((row) => row.state), ["closed"]);
        assert.equal(await records(sql), 0);
      },
    ),
});

Deno.test({
  name:
    "benchmark --store --enqueue of a bundle whose checker does not load is refused (exit 2): nothing enqueued, no room written",
  ignore,
  fn: () =>
    benchmarkBroken(
      'throw new Error("no");\n',
      ["--candidate", "builtin:reference", "--enqueue", "--json"],
      async (r, sql, home) => {
        assert.equal(r.code, 2, r.out + r.err);
        assert.equal(JSON.parse(r.out || r.err).error.code, "BUNDLE_INVALID");
        assert.match(
          r.out + r.err,
          /checker\.js line 1, column \d+: threw while loading Error: no/,
        );
        assert.equal((await sql`select state from dvergr_queue`).length, 0);
        let rooms: string[] = [];
        try {
          rooms = [...Deno.readDirSync(join(home, "rooms"))].map((e) => e.name);
        } catch (e) {
          if (!(e instanceof Deno.errors.NotFound)) throw e;
        }
        assert.deepEqual(rooms, [], "no room written");
      },
    ),
});
