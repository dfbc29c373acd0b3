/**
 * End to end: `dvergr benchmark … --store postgres://… ` with DVERGR_BLOBS=s3://… in a
 * process of its own, on a bundle whose attempts keep evidence (captured files, one large
 * enough to skip the commit's batch), then `dvergr show` and `dvergr report` in another
 * process reading that evidence back from the bucket. The object store is the fake S3 of
 * tests/helpers/fake_s3.ts, which verifies every request's SigV4 signature; the database is
 * a throwaway PostgreSQL cluster. Asserted: every blob is in the bucket under the prefix and
 * none in the database, the evidence reads back whole, the candidate's environment held no
 * AWS variable, and a wrong secret or a --blobs without a store is exit 2 naming the bucket
 * and endpoint, never the secret, as is a command without the store's bucket; a bucket failing at work is exit 2 with nothing recorded
 * (a rerun completes) and a worker waits it out as it waits out the database. The outages
 * are counted requests, never a time: each test's outcome is the same at any load.
 */
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { join } from "node:path";
import postgres from "postgres";
import { startPostgres } from "../helpers/postgres.ts";
import { startFakeS3 } from "../helpers/fake_s3.ts";
import { dvergrWithPath } from "../helpers/cli.ts";
import { DVERGR_RUN_FLAGS } from "../../core/permissions.ts";
import { detectBwrap } from "../../adapters/candidates/command/command.ts";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const BUNDLE = join(ROOT, "examples/workflows/invoice-fields");
const SECRET = "wJalrXUtnFEMI/K7MDENG/s3-blobs-e2e-SECRET";
const KEYS = { accessKeyId: "AKIDE2E", secretAccessKey: SECRET };
const cluster = await startPostgres();
Deno.test.afterAll(async () => await cluster?.stop());

const unisolated: Record<string, string> = (await detectBwrap((k) => Deno.env.get(k)))
  ? {}
  : { DVERGR_ISOLATION: "none" };

/** Writes the world's environment and a 100 kB file into the captured /out. */
const PROBE = 'probe=cmd:mkdir -p "$DVERGR_WORLD/out" && env > "$DVERGR_WORLD/out/env.txt" && ' +
  "head -c 100000 /dev/zero | tr '\\0' x > \"$DVERGR_WORLD/out/big.txt\"";

/** `dvergr ARGS` as a process of its own with `env` (and PATH, Deno's cache) only. */
async function dvergrProcess(args: string[], env: Record<string, string>) {
  const base: Record<string, string> = { ...unisolated };
  for (const k of ["PATH", "HOME", "DENO_DIR", "XDG_CACHE_HOME", "TMPDIR"]) {
    const v = Deno.env.get(k);
    if (v !== undefined) base[k] = v;
  }
  const out = await new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      ...DVERGR_RUN_FLAGS,
      "--config",
      join(ROOT, "deno.json"),
      join(ROOT, "main.ts"),
      ...args,
    ],
    env: { ...base, ...env },
    clearEnv: true,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = (b: Uint8Array) => new TextDecoder().decode(b);
  return { code: out.code, out: text(out.stdout), err: text(out.stderr) };
}

Deno.test({
  name:
    "--blobs s3://…: a benchmark's evidence goes to the bucket, not the database, and show/report read it back in another process",
  ignore: cluster === null,
  async fn() {
    const s3 = startFakeS3({
      buckets: ["dvergr-evidence"],
      accessKeyId: "AKIDE2E",
      secretAccessKey: SECRET,
      region: "eu-central-1",
    });
    const url = await cluster!.database();
    const sql = postgres(url, { max: 1, onnotice: () => {} });
    const home = await Deno.makeTempDir({ prefix: "dvergr-s3-e2e-" });
    try {
      const env = { ...s3.env(), DVERGR_BLOBS: "s3://dvergr-evidence/fleet" };
      const run = await dvergrProcess([
        "benchmark",
        BUNDLE,
        "--candidate",
        PROBE,
        "--case-ids",
        "inv-001,inv-002",
        "--home",
        home,
        "--store",
        url,
        "--json",
      ], env);
      assert.equal(run.code, 0, run.err + run.out);
      const experiment = JSON.parse(run.out).experiment as string;

      // Every blob in the bucket under the prefix, each at its id; none in the database.
      const [{ n }] = await sql`select count(*)::int as n from dvergr_blobs`;
      assert.equal(n, 0);
      const objects = s3.objects.get("dvergr-evidence")!;
      assert.ok(objects.size >= 4, `objects: ${[...objects.keys()]}`); // 2 evidences, bundle files, manifest
      for (const [key, bytes] of objects) {
        const id = key.split("/").pop()!;
        assert.match(key, /^fleet\/[0-9a-f]{2}\/[0-9a-f]{64}$/);
        assert.equal(key.slice(6, 8), id.slice(0, 2));
        const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes as BufferSource));
        assert.equal([...digest].map((b) => b.toString(16).padStart(2, "0")).join(""), id);
      }
      assert.ok(
        s3.requests.every((r) => r.status < 400 || r.method === "HEAD"),
        JSON.stringify(s3.requests),
      );

      // Read back by another process (this one), through the bucket.
      const read = ["--store", url, "--blobs", "s3://dvergr-evidence/fleet"];
      const seen = s3.requests.length;
      const shown = await dvergrWithPath(
        ["show", `${experiment}/probe/inv-001/0`, ...read, "--json"],
        s3.env(),
      );
      assert.equal(shown.code, 0, shown.err);
      assert.ok(s3.requests.slice(seen).some((r) => r.method === "GET" && r.status === 200));
      const attempt = JSON.stringify(JSON.parse(shown.out));
      assert.match(attempt, /DVERGR_WORLD/, "the captured env.txt is shown from its blob");
      assert.match(attempt, /x{1000}/, "the large capture too");
      assert.ok(!attempt.includes("AWS_"), "no AWS variable reached the candidate");
      assert.ok(!attempt.includes(SECRET));
      const report = await dvergrWithPath(["report", experiment, ...read], s3.env());
      assert.equal(report.code, 0, report.err);
      assert.match(report.out, /probe/);

      // Wrong secret: exit 2 at once, naming bucket and endpoint, not the secret given.
      const wrong = await dvergrWithPath(["show", experiment, ...read], {
        ...s3.env(),
        AWS_SECRET_ACCESS_KEY: "wrong-" + SECRET,
      });
      assert.equal(wrong.code, 2, wrong.err);
      assert.match(wrong.err, /s3:\/\/dvergr-evidence\/fleet at http:\/\/127\.0\.0\.1:\d+/);
      assert.match(wrong.err, /HTTP 403 Forbidden/);
      assert.ok(!wrong.err.includes(SECRET));
      // The store knows where its blobs are: without --blobs, or with another bucket, no.
      const without = await dvergrWithPath(["show", experiment, "--store", url], s3.env());
      assert.equal(without.code, 2);
      assert.match(without.err, /keeps its blobs in s3:\/\/dvergr-evidence\/fleet: give --blobs/);
      const other = await dvergrWithPath(
        ["show", experiment, "--store", url, "--blobs", "s3://dvergr-evidence/other"],
        s3.env(),
      );
      assert.equal(other.code, 2);
      assert.match(other.err, /not s3:\/\/dvergr-evidence\/other/);
      const noStore = await dvergrWithPath(
        ["show", experiment, "--blobs", "s3://dvergr-evidence"],
        s3.env(),
      );
      assert.equal(noStore.code, 2);
      assert.match(noStore.err, /without a PostgreSQL store/);
    } finally {
      await sql.end({ timeout: 1 });
      await s3.stop();
      await Deno.remove(home, { recursive: true }).catch(() => {});
    }
  },
});

Deno.test({
  name:
    "--blobs s3://…: a bucket that keeps failing is exit 2 with nothing recorded; once it answers, the rerun completes",
  ignore: cluster === null,
  async fn() {
    const s3 = startFakeS3({ buckets: ["dvergr-evidence"], ...KEYS });
    const url = await cluster!.database();
    const sql = postgres(url, { max: 1, onnotice: () => {} });
    const home = await Deno.makeTempDir({ prefix: "dvergr-s3-e2e-" });
    try {
      const env = { ...s3.env(), DVERGR_BLOBS: "s3://dvergr-evidence/fleet" };
      const args = [
        "benchmark",
        BUNDLE,
        "--candidate",
        "builtin:reference",
        "--case-ids",
        "inv-001",
      ];
      s3.failNext(Infinity, 500, "PUT"); // the bucket's HEAD passes: it fails once at work
      const failed = await dvergrWithPath([...args, "--home", home, "--store", url], env);
      assert.equal(failed.code, 2, failed.err);
      assert.match(
        failed.err,
        /s3:\/\/dvergr-evidence\/fleet at http:\/\/127\.0\.0\.1:\d+: InternalError/,
      );
      assert.ok(!failed.err.includes(KEYS.secretAccessKey));
      const [{ n }] = await sql`select count(*)::int as n from dvergr_records`;
      assert.equal(n, 0);

      s3.failNext(0);
      const again = await dvergrWithPath([...args, "--home", home, "--store", url, "--json"], env);
      assert.equal(again.code, 0, again.err + again.out);
      assert.equal(JSON.parse(again.out).complete, true);
    } finally {
      await sql.end({ timeout: 1 });
      await s3.stop();
      await Deno.remove(home, { recursive: true }).catch(() => {});
    }
  },
});

Deno.test({
  name:
    "--blobs s3://…: a worker waits out a bucket that fails its reads, as it does the database, and finishes the experiment",
  ignore: cluster === null,
  async fn() {
    const s3 = startFakeS3({ buckets: ["dvergr-evidence"], ...KEYS });
    const url = await cluster!.database();
    const home = await Deno.makeTempDir({ prefix: "dvergr-s3-e2e-" });
    const workerHome = await Deno.makeTempDir({ prefix: "dvergr-s3-worker-" });
    try {
      const env = { ...s3.env(), DVERGR_BLOBS: "s3://dvergr-evidence/fleet" };
      const queued = await dvergrWithPath([
        "benchmark",
        BUNDLE,
        "--candidate",
        "builtin:reference",
        "--case-ids",
        "inv-001,inv-002",
        "--home",
        home,
        "--store",
        url,
        "--enqueue",
        "--json",
      ], env);
      assert.equal(queued.code, 0, queued.err + queued.out);
      const experiment = JSON.parse(queued.out).experiment as string;
      // The worker's first read (the bundle's manifest) fails through every one of its six
      // tries, the next twice more: the worker backs off and tries again.
      s3.failNext(8, 503, "GET");
      const worker = await dvergrProcess(
        ["worker", "--store", url, "--home", workerHome, "--experiment", experiment],
        env,
      );
      assert.equal(worker.code, 0, worker.err);
      assert.match(
        worker.err,
        /out of reach \(Cannot read blob [0-9a-f]{64} in s3:\/\/dvergr-evidence\/fleet/,
      );
      assert.equal(s3.requests.filter((r) => r.status === 503).length, 8);
      const shown = await dvergrWithPath(["show", experiment, "--store", url, "--json"], env);
      assert.equal(shown.code, 0, shown.err);
      const cells = JSON.parse(shown.out).cells as { outcome: string }[];
      assert.deepEqual(cells.map((c) => c.outcome), ["passed", "passed"]);
    } finally {
      await s3.stop();
      await Deno.remove(home, { recursive: true }).catch(() => {});
      await Deno.remove(workerHome, { recursive: true }).catch(() => {});
    }
  },
});

Deno.test({
  name:
    "--blobs s3://…: keys, region and endpoint from the AWS profile of the shared files when the environment has none; show reads them back",
  ignore: cluster === null,
  async fn() {
    const s3 = startFakeS3({ buckets: ["dvergr-evidence"], ...KEYS, region: "eu-central-1" });
    const url = await cluster!.database();
    const home = await Deno.makeTempDir({ prefix: "dvergr-s3-profile-" });
    try {
      const given = s3.env();
      const aws = join(home, "aws");
      await Deno.mkdir(aws);
      await Deno.writeTextFile(
        join(aws, "credentials"),
        `[default]\naws_access_key_id = AKIDNOTTHIS\naws_secret_access_key = nope\n\n` +
          `[fleet]\naws_access_key_id = ${KEYS.accessKeyId}\naws_secret_access_key = ${SECRET}\n`,
      );
      await Deno.writeTextFile(
        join(aws, "config"),
        `[profile fleet]\nregion = ${given.AWS_REGION}\nendpoint_url = ${given.AWS_ENDPOINT_URL_S3}\n`,
      );
      // No AWS_* key, region or endpoint in the environment: only the profile's name.
      const env = {
        AWS_PROFILE: "fleet",
        AWS_SHARED_CREDENTIALS_FILE: join(aws, "credentials"),
        AWS_CONFIG_FILE: join(aws, "config"),
        DVERGR_BLOBS: "s3://dvergr-evidence/fleet",
      };
      const run = await dvergrProcess([
        "benchmark",
        BUNDLE,
        "--candidate",
        PROBE,
        "--case-ids",
        "inv-001",
        "--home",
        join(home, "h"),
        "--store",
        url,
        "--json",
      ], env);
      assert.equal(run.code, 0, run.err + run.out);
      const experiment = JSON.parse(run.out).experiment as string;
      assert.ok(s3.objects.get("dvergr-evidence")!.size >= 3);
      const shown = await dvergrProcess(
        ["show", `${experiment}/probe/inv-001/0`, "--store", url, "--json"],
        env,
      );
      assert.equal(shown.code, 0, shown.err);
      const attempt = JSON.stringify(JSON.parse(shown.out));
      assert.match(attempt, /DVERGR_WORLD/);
      assert.ok(!attempt.includes("AWS_") && !attempt.includes(SECRET));
      // The default profile's keys, with the endpoint and region from the environment (that
      // profile names none), are refused by the bucket: they were not the ones used above.
      const other = await dvergrProcess(["show", experiment, "--store", url], {
        ...env,
        AWS_PROFILE: "default",
        AWS_ENDPOINT_URL_S3: given.AWS_ENDPOINT_URL_S3,
        AWS_REGION: given.AWS_REGION,
      });
      assert.equal(other.code, 2, other.err);
      assert.match(other.err, /HTTP 403 Forbidden/);
    } finally {
      await s3.stop();
      await Deno.remove(home, { recursive: true }).catch(() => {});
    }
  },
});
