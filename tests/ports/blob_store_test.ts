/**
 * The BlobStore contract (blob_store_contract.ts) run against every implementation: a
 * directory of files (the embedded home's), memory, the KV state store's view (small blobs
 * beside its records, the rest in files), an S3 bucket (a fake S3 on 127.0.0.1 that verifies
 * every request's SigV4 signature) and the PostgreSQL store's when a server is there.
 */
import { blobStoreContract } from "./blob_store_contract.ts";
import { dirBlobStore } from "../../adapters/store/kv/blob_store.ts";
import { memoryBlobStore } from "../../adapters/store/memory/blob_store.ts";
import { openKvStateStore } from "../../adapters/store/kv/state_store.ts";
import { openPostgresStateStore } from "../../adapters/store/postgres/state_store.ts";
import { startPostgres } from "../helpers/postgres.ts";
import { s3BlobStore } from "../../adapters/store/s3/blob_store.ts";
import { s3Target } from "../../adapters/store/s3/target.ts";
import { startFakeS3 } from "../helpers/fake_s3.ts";

blobStoreContract("dir", async () => {
  const dir = await Deno.makeTempDir({ prefix: "dvergr-blobs-contract-" });
  return { blobs: dirBlobStore(dir), close: () => Deno.remove(dir, { recursive: true }) };
});

blobStoreContract(
  "memory",
  () => Promise.resolve({ blobs: memoryBlobStore(), close: () => Promise.resolve() }),
);

blobStoreContract("kv-view", async () => {
  const dir = await Deno.makeTempDir({ prefix: "dvergr-blobs-contract-" });
  const state = await openKvStateStore(`${dir}/state.kv`, dirBlobStore(`${dir}/blobs`));
  return {
    blobs: state.blobs,
    async close() {
      state.close();
      await Deno.remove(dir, { recursive: true });
    },
  };
});

blobStoreContract("s3", () => {
  const s3 = startFakeS3({
    buckets: ["dvergr-blobs"],
    accessKeyId: "AKIDCONTRACT",
    secretAccessKey: "contract-secret/K7MDENG",
  });
  const target = s3Target("s3://dvergr-blobs/fleet/a", (k) => s3.env()[k]);
  return Promise.resolve({ blobs: s3BlobStore(target), close: () => s3.stop() });
});

const cluster = await startPostgres();
Deno.test.afterAll(async () => await cluster?.stop());
blobStoreContract("postgres", async () => {
  const state = await openPostgresStateStore(await cluster!.database(), { max: 2 });
  return { blobs: state.blobs, close: () => Promise.resolve(state.close()) };
}, { ignore: cluster === null });
