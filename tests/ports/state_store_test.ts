/**
 * The StateStore contract (state_store_contract.ts) run against every implementation: the
 * embedded home's Deno KV store (on a file, as a home keeps it), the memory store, and the
 * PostgreSQL store when a server is installed (a database of its own per test).
 */
import { stateStoreContract, type StateStoreFactory } from "./state_store_contract.ts";
import { deployRecordsContract } from "./deploy_records_contract.ts";
import { openKvStateStore } from "../../adapters/store/kv/state_store.ts";
import { dirBlobStore } from "../../adapters/store/kv/blob_store.ts";
import { memoryStateStore } from "../../adapters/store/memory/state_store.ts";
import { openPostgresStateStore } from "../../adapters/store/postgres/state_store.ts";
import { startPostgres } from "../helpers/postgres.ts";

const kvStore: StateStoreFactory = async () => {
  const dir = await Deno.makeTempDir({ prefix: "dvergr-kv-contract-" });
  const store = await openKvStateStore(`${dir}/state.kv`, dirBlobStore(`${dir}/blobs`));
  return {
    store,
    async close() {
      store.close();
      await Deno.remove(dir, { recursive: true });
    },
  };
};
const memoryStore: StateStoreFactory = () => {
  const store = memoryStateStore();
  return Promise.resolve({ store, close: () => Promise.resolve(store.close()) });
};
stateStoreContract("kv", kvStore);
stateStoreContract("memory", memoryStore);
deployRecordsContract("kv", kvStore);
deployRecordsContract("memory", memoryStore);

const cluster = await startPostgres();
Deno.test.afterAll(async () => await cluster?.stop());
const postgresStore: StateStoreFactory = async () => {
  const store = await openPostgresStateStore(await cluster!.database(), { max: 4 });
  return { store, close: () => Promise.resolve(store.close()) };
};
stateStoreContract("postgres", postgresStore, { ignore: cluster === null });
deployRecordsContract("postgres", postgresStore, { ignore: cluster === null });
