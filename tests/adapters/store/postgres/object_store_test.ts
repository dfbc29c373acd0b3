/**
 * The PostgreSQL state store with its blobs in an S3 bucket (a fake S3 that verifies SigV4,
 * tests/helpers/fake_s3.ts): a commit's blobs are stored in the bucket before its records'
 * transaction begins, so a record never names a blob that is not stored — while the bucket
 * fails, nothing is recorded and the lease stays its holder's; once it answers, the same
 * commit lands, its blobs read back through the store and the database holds none. Blobs the
 * database held before the store was given a bucket still read back.
 */
import assert from "node:assert/strict";
import postgres from "postgres";
import { startPostgres } from "../../../helpers/postgres.ts";
import { startFakeS3 } from "../../../helpers/fake_s3.ts";
import { openPostgresStateStore } from "../../../../adapters/store/postgres/state_store.ts";
import { s3BlobStore } from "../../../../adapters/store/s3/blob_store.ts";
import { s3Target } from "../../../../adapters/store/s3/target.ts";
import { blobId } from "../../../../core/ports/blob_store.ts";
import { type AttemptRecord, cellKey } from "../../../../core/bench/records.ts";

const cluster = await startPostgres();
Deno.test.afterAll(async () => await cluster?.stop());

function record(evidence: string): AttemptRecord {
  return {
    experimentId: "e1",
    candidate: "c",
    caseId: "k",
    repetition: 0,
    inputHash: "h",
    tryNo: 1,
    startedAt: "2026-12-01T00:00:01Z",
    elapsedMs: 5,
    status: "completed",
    verdict: { checks: { ok: true }, reward: 1 },
    fault: null,
    passed: true,
    usage: { inputTokens: 0, outputTokens: 0 },
    billedMicros: 0,
    listMicros: null,
    isolated: true,
    trust: "ad-hoc",
    evidenceRef: evidence,
  } as unknown as AttemptRecord;
}

Deno.test({
  name: "postgres + S3 blobs: a record is committed only once its blobs are in the bucket",
  ignore: cluster === null,
  async fn() {
    const s3 = startFakeS3({
      buckets: ["evidence"],
      accessKeyId: "AKIDPG",
      secretAccessKey: "pg-secret",
    });
    const url = await cluster!.database();
    const objects = s3BlobStore(s3Target("s3://evidence/x", (k) => s3.env()[k]), {
      tries: 2,
      backoffMs: 1,
    });
    const state = await openPostgresStateStore(url, { max: 2, objectStore: objects });
    const sql = postgres(url, { max: 1, onnotice: () => {} });
    try {
      await state.putExperiment({
        id: "e1",
        room: "r",
        bundleName: "b",
        bundleId: "B",
        createdAt: "2026-12-01T00:00:00Z",
        cells: 1,
        definition: {},
      });
      const cell = cellKey("c", "k", 0);
      const holder = { pid: 1, host: "h", owner: "w1" };
      assert.equal((await state.takeLeases("e1", [cell], holder, 60_000))[0].ok, true);
      const evidence = new TextEncoder().encode('{"files":{"out/a.txt":"A"}}');
      const id = blobId(evidence);
      const commit = [{ record: record(id), blobs: new Map([[id, evidence]]) }];

      s3.failNext(2, 500); // every try of the blob's PUT
      await assert.rejects(state.putAttempts(commit, "w1"), /InternalError/);
      assert.equal(await state.cellRecord("e1", cell), null, "no record names a missing blob");
      assert.equal((await state.leaseOf("e1", cell))?.owner, "w1");

      assert.deepEqual(await state.putAttempts(commit, "w1"), [true]);
      assert.equal((await state.cellRecord("e1", cell))?.evidenceRef, id);
      assert.deepEqual(await state.blobs.get(id), evidence);
      assert.ok(s3.objects.get("evidence")!.has(`x/${id.slice(0, 2)}/${id}`));
      const [{ n }] = await sql`select count(*)::int as n from dvergr_blobs`;
      assert.equal(n, 0);

      const before = await openPostgresStateStore(url, { max: 1 });
      const old = await before.blobs.put("kept in the database before the bucket");
      before.close();
      assert.equal(await state.blobs.has(old), true);
      assert.equal(
        new TextDecoder().decode((await state.blobs.get(old))!),
        "kept in the database before the bucket",
      );
      assert.equal(s3.objects.get("evidence")!.size, 1, "read, not copied");
    } finally {
      state.close();
      await sql.end({ timeout: 1 });
      await s3.stop();
    }
  },
});
